import { anyHexMatches, hmacHex } from './hmac';
import {
  bodyField,
  nonEmptySecret,
  SignatureVerifier,
  unsigned,
  verified,
} from './signature-verifier';

/** Vercel: `x-vercel-signature: <hex HMAC-SHA1 of the raw body>`; the delivery id is `id`. */
export const vercelVerifier: SignatureVerifier = {
  scheme: 'vercel',
  credentialHeaders: ['x-vercel-signature'],

  verify(request) {
    const signature = request.header('x-vercel-signature');
    if (!signature) return unsigned('x-vercel-signature');
    return anyHexMatches(hmacHex('sha1', request.secret, request.body), [signature])
      ? verified(request.body)
      : { ok: false, reason: 'vercel: signature does not match' };
  },

  deliveryId: (_header, body) => bodyField(body, 'id'),
  checkSecret: nonEmptySecret,
};
