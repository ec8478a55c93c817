import { anyHexMatches, hmacHex } from './hmac';
import { nonEmptySecret, SignatureVerifier, unsigned } from './signature-verifier';

/** GitHub: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>`; id `X-GitHub-Delivery`. */
export const githubVerifier: SignatureVerifier = {
  scheme: 'github',
  credentialHeaders: ['x-hub-signature-256', 'x-hub-signature'],

  verify(request) {
    const header = request.header('x-hub-signature-256');
    if (!header) return unsigned('X-Hub-Signature-256');
    if (!header.startsWith('sha256=')) {
      return { ok: false, reason: 'github: X-Hub-Signature-256 must start with sha256=' };
    }
    const expected = hmacHex('sha256', request.secret, request.body);
    return anyHexMatches(expected, [header.slice('sha256='.length)])
      ? { ok: true }
      : { ok: false, reason: 'github: signature does not match' };
  },

  deliveryId: (header) => header('x-github-delivery'),
  checkSecret: nonEmptySecret,
};
