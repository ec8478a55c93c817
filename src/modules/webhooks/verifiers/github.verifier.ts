import { anyHexMatches, hmacHex } from './hmac';
import { nonEmptySecret, SignatureVerifier, unsigned, verified } from './signature-verifier';

/**
 * GitHub: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>`. The id `X-GitHub-Delivery`
 * is not signed (nor is any timestamp): a replay is recognised by the body the signature covers.
 */
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
      ? verified(request.body)
      : { ok: false, reason: 'github: signature does not match' };
  },

  deliveryId: (header) => header('x-github-delivery'),
  checkSecret: nonEmptySecret,
};
