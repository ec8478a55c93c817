import { Inject, Injectable } from '@nestjs/common';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { API_PREFIX } from '../../config/api-prefix';
import { APP_CONFIG, AppConfig, ConfigError } from '../../config/app-config';

/** What a signed download URL grants: one blob, served with this type and file name. */
export interface DownloadGrant {
  key: string;
  contentType: string;
  filename: string;
}

export interface SignedUrl {
  url: string;
  expiresAt: Date;
}

/**
 * Signatures of this scheme cover the route they were minted for; the tag changes whenever what
 * is signed does, so a URL of an earlier scheme is refused rather than read another way.
 */
const SCHEME = 'ambient-download-v2';

/** The route (under the API prefix) a blob's signed URL is served at. */
export function blobPath(key: string): string {
  return `blobs/${key}`;
}

/**
 * Time-limited download URLs that Ambient serves itself (`GET /blobs/<key>`, run attachments):
 * the query carries the expiry, type and file name, and an HMAC-SHA256 with the signing key over
 * them, the granted key and the route serving it, so a signature is good on that route only.
 */
@Injectable()
export class UrlSigner {
  private readonly key: string;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    if (!config.blobs.signingKey) {
      throw new ConfigError('AMBIENT_URL_SIGNING_KEY: missing (provideKeys was not called)');
    }
    this.key = config.blobs.signingKey;
  }

  sign(grant: DownloadGrant, now = Date.now()): SignedUrl {
    return this.signAt(blobPath(grant.key), grant, now);
  }

  /**
   * A signed URL for another public route than `/blobs` (`path`, under the API prefix) that
   * checks it with `refusal(path, …)`, e.g. run attachments kept in MySQL. The grant's key names
   * what is granted; the signature covers both, so it is good for one thing on one route.
   */
  signAt(path: string, grant: DownloadGrant, now = Date.now()): SignedUrl {
    const expires = Math.floor(now / 1000) + this.config.blobs.urlTtlSeconds;
    const query = new URLSearchParams({
      expires: String(expires),
      type: grant.contentType,
      filename: grant.filename,
    });
    query.set('signature', this.signature(path, grant, expires));
    const base = this.config.server.publicUrl.replace(/\/+$/, '');
    return {
      url: `${base}/${API_PREFIX}/${path}?${query}`,
      expiresAt: new Date(expires * 1000),
    };
  }

  /**
   * Why the URL is refused (altered, expired, minted for another route), or null when it may be
   * served at `path`.
   */
  refusal(
    path: string,
    grant: DownloadGrant,
    expires: string,
    signature: string,
    now = Date.now(),
  ): string | null {
    if (!/^\d{1,12}$/.test(expires) || !/^[0-9a-f]{64}$/.test(signature)) {
      return 'the download URL is malformed';
    }
    const expected = Buffer.from(this.signature(path, grant, Number(expires)), 'hex');
    if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) {
      return 'the download URL signature does not match';
    }
    if (Number(expires) * 1000 <= now) return 'the download URL has expired';
    return null;
  }

  private signature(path: string, grant: DownloadGrant, expires: number): string {
    // JSON keeps the fields apart whatever they contain (a file name may hold a line break).
    const signed = JSON.stringify([
      SCHEME,
      path,
      grant.key,
      expires,
      grant.contentType,
      grant.filename,
    ]);
    return createHmac('sha256', this.key).update(signed).digest('hex');
  }
}
