import { Controller, Get, Param, Query, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { Public } from '../../common/auth/public.decorator';
import { setDownloadHeaders, signedGrant } from '../blobs';
import { UrlSigner } from '../blobs';
import {
  ATTACHMENT_GRANT_NAMESPACE,
  attachmentGrantKey,
  attachmentPath,
  RunAttachmentsService,
} from './run-attachments.service';

/**
 * Serves run attachments behind the signed URLs of `GET /agent/runs/{id}/handoff/attachments`,
 * as `/blobs` serves blobs: the signature is the credential, so no API key is needed.
 */
@ApiExcludeController()
@Public()
@Controller(ATTACHMENT_GRANT_NAMESPACE)
export class RunAttachmentsController {
  constructor(
    private readonly attachments: RunAttachmentsService,
    private readonly signer: UrlSigner,
  ) {}

  @Get(':attachmentId')
  async download(
    @Param('attachmentId') attachmentId: string,
    @Query() query: Record<string, unknown>,
    @Res() res: Response,
  ): Promise<void> {
    const grant = signedGrant(
      this.signer,
      attachmentPath(attachmentId),
      attachmentGrantKey(attachmentId),
      query,
    );
    const data = await this.attachments.bytes(attachmentId);
    setDownloadHeaders(res, grant, data.length);
    res.end(data);
  }
}
