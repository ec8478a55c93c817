import { anyHexMatches, hmacHex } from './hmac';
import {
  bodyField,
  nonEmptySecret,
  SignatureVerifier,
  unsigned,
  verified,
} from './signature-verifier';

/**
 * PagerDuty webhooks v3: `X-PagerDuty-Signature: v1=<hex>[,v1=<hex>…]` (several while a secret
 * rotates), HMAC-SHA256 of the raw body. The delivery id is the event's `event.id`.
 */
export const pagerdutyVerifier: SignatureVerifier = {
  scheme: 'pagerduty',
  credentialHeaders: ['x-pagerduty-signature'],

  verify(request) {
    const header = request.header('x-pagerduty-signature');
    if (!header) return unsigned('X-PagerDuty-Signature');
    const signatures = header
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s.startsWith('v1='))
      .map((s) => s.slice(3));
    if (signatures.length === 0) return { ok: false, reason: 'pagerduty: no v1= signature' };
    return anyHexMatches(hmacHex('sha256', request.secret, request.body), signatures)
      ? verified(request.body)
      : { ok: false, reason: 'pagerduty: no matching v1 signature' };
  },

  deliveryId: (_header, body) => bodyField(body, 'event', 'id'),
  checkSecret: nonEmptySecret,
};
