import { isUtf8 } from 'node:buffer';
import { createHmac } from 'node:crypto';
import { constantTimeEqualText } from './hmac';
import {
  REPLAY_TOLERANCE_SECONDS,
  SignatureVerifier,
  SignedRequest,
  unsigned,
  Verification,
  verified,
} from './signature-verifier';

const BRANDS = ['webhook', 'svix'] as const;
const SECRET_PREFIX = 'whsec_';

/** The base64 of a `whsec_<base64>` secret (a bare base64 secret is taken as it is). */
function secretBase64(secret: string): string {
  return secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
}

/**
 * The checks of the reference library (`standardwebhooks`), in its order and with its messages,
 * on the bytes as received: its timestamp rule (an integer within ±5 minutes, signed as that
 * integer), then `v1,<base64>` HMAC-SHA256 over `id.timestamp.body`. The library hashes the body
 * decoded as UTF-8 and encoded again, which for invalid UTF-8 is not the body: such a body is
 * signed the library's way too (the spec tests sign with the library).
 */
function check(
  key: Buffer,
  headers: { id: string; timestamp: string; signature: string },
  body: Buffer,
  nowMs: number,
): { ok: true; prefix: Buffer } | { ok: false; reason: string } {
  const timestamp = parseInt(headers.timestamp, 10);
  if (Number.isNaN(timestamp)) return { ok: false, reason: 'Invalid Signature Headers' };
  const now = Math.floor(nowMs / 1000);
  if (now - timestamp > REPLAY_TOLERANCE_SECONDS) {
    return { ok: false, reason: 'Message timestamp too old' };
  }
  if (timestamp > now + REPLAY_TOLERANCE_SECONDS) {
    return { ok: false, reason: 'Message timestamp too new' };
  }
  if (key.length === 0) return { ok: false, reason: 'bad secret' };
  const prefix = Buffer.from(`${headers.id}.${timestamp}.`, 'utf8');
  const text = isUtf8(body) ? body : Buffer.from(body.toString(), 'utf8');
  const expected = createHmac('sha256', key).update(prefix).update(text).digest('base64');
  let matched = false;
  for (const versioned of headers.signature.split(' ')) {
    const [version, signature] = versioned.split(',');
    if (version === 'v1' && signature !== undefined) {
      matched = constantTimeEqualText(expected, signature) || matched;
    }
  }
  return matched ? { ok: true, prefix } : { ok: false, reason: 'No matching signature found' };
}

/**
 * Standard Webhooks (https://www.standardwebhooks.com), by the reference library's rules (see
 * check): HMAC-SHA256 over `id.timestamp.body`, `v1,<base64>` signatures (space-separated, so
 * rotations verify), ±5 minutes. Svix sends the same scheme with `svix-*` headers; those are
 * accepted when the `webhook-*` ones are absent. The signature covers the id:
 * the id of the header set that was verified is the provider's id and the replay key (an unsigned
 * `webhook-id` beside signed `svix-*` headers is ignored).
 */
export const standardWebhooksVerifier: SignatureVerifier = {
  scheme: 'standard_webhooks',
  credentialHeaders: ['webhook-signature', 'svix-signature'],

  verify(request: SignedRequest): Verification {
    const brand = BRANDS.find((b) => request.header(`${b}-signature`) !== undefined);
    if (!brand) return unsigned('webhook-signature (or svix-signature)');
    const headers = {
      id: request.header(`${brand}-id`) ?? '',
      timestamp: request.header(`${brand}-timestamp`) ?? '',
      signature: request.header(`${brand}-signature`) ?? '',
    };
    if (!headers.id || !headers.timestamp) return unsigned(`${brand}-id and ${brand}-timestamp`);
    const verdict = check(
      Buffer.from(secretBase64(request.secret), 'base64'),
      headers,
      request.body,
      request.nowMs,
    );
    if (!verdict.ok) return { ok: false, reason: `standard_webhooks: ${verdict.reason}` };
    return verified(Buffer.concat([verdict.prefix, request.body]), headers.id);
  },

  checkSecret(secret) {
    const base64 = secretBase64(secret);
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(base64)) {
      return 'a standard_webhooks secret must be "whsec_" followed by base64';
    }
    const bytes = Buffer.from(base64, 'base64').length;
    return bytes >= 24 && bytes <= 64
      ? null
      : `a standard_webhooks secret must decode to 24-64 bytes (got ${bytes})`;
  },
};
