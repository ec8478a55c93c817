import { Inject, Injectable } from '@nestjs/common';
import { ApiError } from '../../common/errors/api-error';
import { BLOB_STORE, BlobStore, SignedUrl, UrlSigner } from '../blobs';
import { ConversationRuns } from './conversation-runs';
import { artifactBlobKey } from './artifact-writer.service';
import { RunArtifact } from './run-artifact.entity';
import { RunArtifactRepository } from './run-artifact.repository';

/** The Oz artifact shapes of GET /agent/artifacts/{uid} (PLAN, SCREENSHOT, FILE). */
export interface ArtifactView {
  artifact_uid: string;
  artifact_type: string;
  created_at: string;
  data: Record<string, unknown>;
  source_links?: { run_url?: string };
}

/**
 * Reads artifacts for the API. A private artifact is visible to its team only; a public one to
 * anyone, with the file path left out for anonymous readers. Invisible and unknown look alike
 * (404), and so do types that have nothing to read (PULL_REQUEST, EXTERNAL_REFERENCE).
 */
@Injectable()
export class ArtifactReader {
  constructor(
    private readonly artifacts: RunArtifactRepository,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    private readonly signer: UrlSigner,
    private readonly runs: ConversationRuns,
  ) {}

  async view(uid: string, teamId: string | null): Promise<ArtifactView> {
    const artifact = await this.visible(uid, teamId);
    const base = {
      artifact_uid: artifact.id,
      artifact_type: artifact.artifactType,
      created_at: artifact.createdAt.toISOString(),
    };
    const d = artifact.data;
    if (artifact.artifactType === 'PLAN') {
      const blob = await this.blobs.get(artifactBlobKey(artifact.id));
      return {
        ...base,
        data: {
          document_uid: d.document_uid,
          notebook_uid: d.notebook_uid,
          content: blob?.data.toString('utf8') ?? '',
          content_type: 'text/markdown',
          ...(d.title ? { title: d.title } : {}),
        },
      };
    }
    const signed = this.download(artifact);
    const common = {
      download_url: signed.url,
      expires_at: signed.expiresAt.toISOString(),
      content_type: d.mime_type,
      ...(d.description ? { description: d.description } : {}),
    };
    if (artifact.artifactType === 'SCREENSHOT') return { ...base, data: common };
    return {
      ...base,
      data: {
        ...common,
        filename: d.filename,
        ...(teamId === artifact.teamId ? { filepath: d.filepath } : {}),
        ...(typeof d.size_bytes === 'number' ? { size_bytes: d.size_bytes } : {}),
        ...(d.title ? { title: d.title } : {}),
      },
    };
  }

  async downloadUrl(uid: string, teamId: string | null): Promise<SignedUrl> {
    return this.download(await this.visible(uid, teamId));
  }

  /** A screenshot of a run of the team's conversation (Oz: /conversations/{id}/screenshots/{uid}). */
  async screenshotUrl(conversationId: string, uid: string, teamId: string): Promise<SignedUrl> {
    const artifact = await this.artifacts.find(uid);
    const found =
      artifact?.artifactType === 'SCREENSHOT' &&
      artifact.teamId === teamId &&
      (await this.runs.isInConversation(artifact.runId, conversationId));
    if (!found) throw ApiError.notFound(`screenshot ${uid}`);
    return this.download(artifact);
  }

  private download(artifact: RunArtifact): SignedUrl {
    const d = artifact.data;
    return this.signer.sign({
      key: artifactBlobKey(artifact.id),
      contentType: String(d.mime_type ?? 'text/markdown'),
      filename: String(d.filename ?? `${artifact.artifactType.toLowerCase()}-${artifact.id}`),
    });
  }

  private async visible(uid: string, teamId: string | null): Promise<RunArtifact> {
    const artifact = await this.artifacts.find(uid);
    const readable =
      artifact &&
      (artifact.isPublic || artifact.teamId === teamId) &&
      ['PLAN', 'SCREENSHOT', 'FILE'].includes(artifact.artifactType);
    if (!readable) throw ApiError.notFound(`artifact ${uid}`);
    return artifact;
  }
}
