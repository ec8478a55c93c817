import { anyHexMatches, hmacHex } from './hmac';
import {
  bodyField,
  nonEmptySecret,
  REPLAY_TOLERANCE_SECONDS,
  SignatureVerifier,
  unsigned,
  verified,
} from './signature-verifier';

/**
 * Stripe: `Stripe-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>…]`, HMAC-SHA256 of `t.body`
 * keyed with the whole endpoint secret (`whsec_…` as text). Timestamps more than 5 minutes
 * away are refused. The delivery id is the event's `id`.
 */
export const stripeVerifier: SignatureVerifier = {
  scheme: 'stripe',
  credentialHeaders: ['stripe-signature'],

  verify(request) {
    const header = request.header('stripe-signature');
    if (!header) return unsigned('Stripe-Signature');
    let timestamp: string | undefined;
    const signatures: string[] = [];
    for (const part of header.split(',')) {
      const at = part.indexOf('=');
      const key = part.slice(0, at).trim();
      const value = part.slice(at + 1).trim();
      if (key === 't') timestamp = value;
      if (key === 'v1') signatures.push(value);
    }
    if (!timestamp || !/^\d+$/.test(timestamp) || signatures.length === 0) {
      return { ok: false, reason: 'stripe: Stripe-Signature lacks t= or v1=' };
    }
    const age = request.nowMs / 1000 - Number(timestamp);
    if (Math.abs(age) > REPLAY_TOLERANCE_SECONDS) {
      return { ok: false, reason: `stripe: timestamp is ${Math.round(age)} s away from now` };
    }
    const signed = Buffer.concat([Buffer.from(`${timestamp}.`), request.body]);
    return anyHexMatches(hmacHex('sha256', request.secret, signed), signatures)
      ? verified(signed)
      : { ok: false, reason: 'stripe: no matching v1 signature' };
  },

  deliveryId: (_header, body) => bodyField(body, 'id'),
  checkSecret: nonEmptySecret,
};
