import { Inject, Injectable } from '@nestjs/common';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { API_PREFIX } from '../../bootstrap/http';
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
 * Time-limited download URLs that Ambient serves itself (`GET /blobs/<key>`): the query carries
 * the expiry, type and file name, and an HMAC-SHA256 over all of them with the signing key.
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
    return this.signAt(`blobs/${grant.key}`, grant, now);
  }

  /**
   * A signed URL for another public route than `/blobs` (`path`, under the API prefix) that
   * checks it with `refusal`, e.g. run attachments kept in MySQL. The grant's key names what is
   * granted; a route's keys live in their own namespace, so a signature is good for one thing.
   */
  signAt(path: string, grant: DownloadGrant, now = Date.now()): SignedUrl {
    const expires = Math.floor(now / 1000) + this.config.blobs.urlTtlSeconds;
    const query = new URLSearchParams({
      expires: String(expires),
      type: grant.contentType,
      filename: grant.filename,
    });
    query.set('signature', this.signature(grant, expires));
    const base = this.config.server.publicUrl.replace(/\/+$/, '');
    return {
      url: `${base}/${API_PREFIX}/${path}?${query}`,
      expiresAt: new Date(expires * 1000),
    };
  }

  /** Why the URL is refused (altered, expired), or null when it may be served. */
  refusal(
    grant: DownloadGrant,
    expires: string,
    signature: string,
    now = Date.now(),
  ): string | null {
    if (!/^\d{1,12}$/.test(expires) || !/^[0-9a-f]{64}$/.test(signature)) {
      return 'the download URL is malformed';
    }
    const expected = Buffer.from(this.signature(grant, Number(expires)), 'hex');
    if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) {
      return 'the download URL signature does not match';
    }
    if (Number(expires) * 1000 <= now) return 'the download URL has expired';
    return null;
  }

  private signature(grant: DownloadGrant, expires: number): string {
    return createHmac('sha256', this.key)
      .update([grant.key, expires, grant.contentType, grant.filename].join('\n'))
      .digest('hex');
  }
}
