import { anyHexMatches, hmacHex } from './hmac';
import { nonEmptySecret, SignatureVerifier, unsigned, verified } from './signature-verifier';

/**
 * Sentry integration platform: `Sentry-Hook-Signature: <hex HMAC-SHA256>` keyed with the
 * integration's client secret. Sentry's docs verify over `JSON.stringify(body)`; Sentry sends
 * that compact form, so the raw body is checked first and the compact re-serialisation second.
 * The delivery id is `Request-ID` (unsigned). What matched is what the signature covers: any
 * formatting of the same JSON verifies against the compact form, so that form is the signed content.
 */
export const sentryVerifier: SignatureVerifier = {
  scheme: 'sentry',
  credentialHeaders: ['sentry-hook-signature'],

  verify(request) {
    const signature = request.header('sentry-hook-signature');
    if (!signature) return unsigned('Sentry-Hook-Signature');
    if (anyHexMatches(hmacHex('sha256', request.secret, request.body), [signature])) {
      return verified(request.body);
    }
    const compact = compactJson(request.body);
    if (
      compact !== null &&
      anyHexMatches(hmacHex('sha256', request.secret, compact), [signature])
    ) {
      return verified(Buffer.from(compact, 'utf8'));
    }
    return { ok: false, reason: 'sentry: signature does not match' };
  },

  deliveryId: (header) => header('request-id'),
  checkSecret: nonEmptySecret,
};

function compactJson(body: Buffer): string | null {
  try {
    return JSON.stringify(JSON.parse(body.toString('utf8')));
  } catch {
    return null;
  }
}
