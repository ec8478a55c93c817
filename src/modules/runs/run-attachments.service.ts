import { Injectable } from '@nestjs/common';
import { ApiError } from '../../common/errors/api-error';
import { UUID_PATTERN } from '../../common/ids';
import { DownloadGrant, UrlSigner } from '../blobs';
import { HandoffAttachmentDto } from './dto/handoff-attachment.dto';
import { RunAttachment } from './entities/run-attachment.entity';
import { RunAttachmentRepository } from './run-attachment.repository';
import { RunsService } from './runs.service';

/** The namespace of attachment grants: their URLs are served by RunAttachmentsController. */
export const ATTACHMENT_GRANT_NAMESPACE = 'run-attachments';

/**
 * A run's attachments (`run_attachments`, bytes in MySQL) as Oz handoff attachments with signed
 * download URLs, and the bytes behind those URLs.
 */
@Injectable()
export class RunAttachmentsService {
  constructor(
    private readonly attachments: RunAttachmentRepository,
    private readonly runs: RunsService,
    private readonly signer: UrlSigner,
  ) {}

  /**
   * Every attachment of a run of the team, oldest first (those of one request by file name);
   * 404 for another team's run.
   */
  async list(teamId: string, runId: string): Promise<HandoffAttachmentDto[]> {
    await this.runs.findVisible(teamId, runId);
    const rows = await this.attachments.listed(runId);
    return rows.map((row) => ({
      attachment_id: row.id,
      download_url: this.signer.signAt(attachmentPath(row.id), grantFor(row)).url,
      filename: row.fileName,
      mime_type: row.mimeType,
    }));
  }

  /** The attachment a signed URL names (the URL was checked by the caller), or 404. */
  async bytes(attachmentId: string): Promise<Buffer> {
    const data = UUID_PATTERN.test(attachmentId) ? await this.attachments.data(attachmentId) : null;
    if (data === null) throw ApiError.notFound('attachment');
    return data;
  }
}

export function attachmentGrantKey(attachmentId: string): string {
  return `${ATTACHMENT_GRANT_NAMESPACE}/${attachmentId}`;
}

/** Where a signed attachment download is served, under the API prefix. */
export function attachmentPath(attachmentId: string): string {
  return attachmentGrantKey(attachmentId);
}

function grantFor(row: Pick<RunAttachment, 'id' | 'fileName' | 'mimeType'>): DownloadGrant {
  return { key: attachmentGrantKey(row.id), contentType: row.mimeType, filename: row.fileName };
}
