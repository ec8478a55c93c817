import { Controller, Get, Inject, Param, Query, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { pipeline } from 'node:stream/promises';
import { Public } from '../../common/auth/public.decorator';
import { ApiError } from '../../common/errors/api-error';
import { BLOB_STORE, BlobStore, isValidBlobKey } from './blob-store';
import { attachmentDisposition } from '../../common/content-disposition';
import { blobPath, DownloadGrant, UrlSigner } from './url-signer';

/** Serves blobs behind signed URLs; the signature is the credential, so no API key is needed. */
@ApiExcludeController()
@Public()
@Controller('blobs')
export class BlobsController {
  constructor(
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    private readonly signer: UrlSigner,
  ) {}

  @Get(':namespace/:name')
  async download(
    @Param('namespace') namespace: string,
    @Param('name') name: string,
    @Query() query: Record<string, unknown>,
    @Res() res: Response,
  ): Promise<void> {
    const key = `${namespace}/${name}`;
    const grant = signedGrant(this.signer, blobPath(key), key, query, isValidBlobKey(key));
    const blob = await this.blobs.openStream(key);
    if (!blob) throw ApiError.notFound('blob');
    try {
      setDownloadHeaders(res, grant, blob.size);
      // A store failing mid-way can only cut the response short (the status is already sent).
      await pipeline(blob.stream, res).catch(() => res.destroy());
    } finally {
      // Whatever happened (headers refused, client gone, store failed), the file is closed now,
      // not when the collector finds the stream.
      blob.stream.destroy();
    }
  }
}

/**
 * The grant a signed download URL's query carries for `key` on the route `path`, checked
 * (signature, then expiry): 403 `not_authorized` in the Error model when it was altered, has
 * expired, was signed for another route or is malformed.
 */
export function signedGrant(
  signer: UrlSigner,
  path: string,
  key: string,
  query: Record<string, unknown>,
  wellFormedKey = true,
): DownloadGrant {
  const text = (field: string) => (typeof query[field] === 'string' ? query[field] : '');
  const grant = { key, contentType: text('type'), filename: text('filename') };
  const refusal = wellFormedKey
    ? signer.refusal(path, grant, text('expires'), text('signature'))
    : 'the download URL is malformed';
  if (refusal) throw new ApiError('not_authorized', refusal);
  return grant;
}

/** The headers of every signed download: type, size, no caching, never rendered by a browser. */
export function setDownloadHeaders(res: Response, grant: DownloadGrant, size: number): void {
  res.setHeader('Content-Type', grant.contentType || 'application/octet-stream');
  res.setHeader('Content-Length', String(size));
  res.setHeader('Cache-Control', 'private, no-store');
  // Agents and callers choose the types: never let a browser run a download from this origin.
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Content-Security-Policy', "default-src 'none'; sandbox");
  res.setHeader('Content-Disposition', attachmentDisposition(grant.filename));
}
