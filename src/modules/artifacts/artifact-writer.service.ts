import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { newUid } from '../../common/ids';
import type { JsonObject } from '../../common/json';
import { BLOB_STORE, BlobStore } from '../blobs';
import type { ArtifactInput } from './artifact-input';
import { RunArtifactRepository } from './run-artifact.repository';
import type { RunArtifact } from './run-artifact.entity';

export type RowWriter = (
  insert: (manager?: EntityManager) => Promise<RunArtifact>,
) => Promise<RunArtifact>;

export const artifactBlobKey = (artifactId: string) => `artifacts/${artifactId}`;

/**
 * Stores a reported artifact: its bytes (file, screenshot, plan text) in the blob store first,
 * then the row, so a listed artifact always has its content.
 */
@Injectable()
export class ArtifactWriter {
  constructor(
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    private readonly artifacts: RunArtifactRepository,
  ) {}

  async report(
    run: { id: string; teamId: string },
    input: ArtifactInput,
    /** Runs the row's insert, e.g. as an execution's fenced write; the blob is stored before. */
    inTransaction: RowWriter = (insert) => insert(),
  ): Promise<RunArtifact> {
    const id = newUid();
    let data: JsonObject;
    switch (input.type) {
      case 'PLAN':
        await this.blobs.put(artifactBlobKey(id), input.content);
        data = {
          document_uid: id,
          artifact_uid: id,
          notebook_uid: id,
          ...(input.title ? { title: input.title } : {}),
        };
        break;
      case 'PULL_REQUEST':
        data = { url: input.url, branch: input.branch, status: input.status };
        break;
      case 'FILE':
        await this.blobs.put(artifactBlobKey(id), input.file);
        data = {
          artifact_uid: id,
          filename: input.filename,
          filepath: input.filepath,
          mime_type: input.mimeType,
          size_bytes: input.file.length,
          ...(input.description ? { description: input.description } : {}),
          ...(input.title ? { title: input.title } : {}),
        };
        break;
      case 'SCREENSHOT':
        await this.blobs.put(artifactBlobKey(id), input.file);
        data = {
          artifact_uid: id,
          mime_type: input.mimeType,
          ...(input.description ? { description: input.description } : {}),
        };
        break;
      case 'EXTERNAL_REFERENCE':
        data = {
          reference_type: input.referenceType,
          url: input.url,
          ...(input.title ? { title: input.title } : {}),
          ...(input.metadata ? { metadata: input.metadata } : {}),
        };
        break;
    }
    const options = { id, isPublic: input.isPublic };
    return inTransaction((manager) =>
      this.artifacts.record(run, input.type, data, options, manager),
    );
  }
}
