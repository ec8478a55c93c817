import { createHash } from 'node:crypto';
import type { SignatureVerifier, SignedContent } from '../modules/webhooks/verifiers';

export type IdentitySource =
  'configured_header' | 'signed_id' | 'provider' | 'sender_header' | 'body_hash';

export interface DeliveryIdentity {
  id: string;
  source: IdentitySource;
  /**
   * For signed deliveries: what the signature covers (the signed id, else a digest of the signed
   * content). A second dedup key beside `id`, so a captured request re-sent with another unsigned
   * id is still a duplicate.
   */
  contentKey: string | null;
  /**
   * The provider's own unsigned id (`X-GitHub-Delivery`, Sentry `Request-ID`, the event id in the
   * body) whenever one is sent, null otherwise or when the scheme signs its id (`contentKey` is
   * that id then). A dedup key of its own, so a delivery named by the configured header is still a
   * duplicate of one that carried the same provider id under another configured id.
   */
  providerKey: string | null;
  /** `X-Ambient-Delivery-Id` (else `X-Warp-Delivery-Id`) whenever sent: a dedup key of its own. */
  senderKey: string | null;
}

/** Headers a sender may set to name its delivery (Warp's name is accepted too). */
export const SENDER_ID_HEADERS = ['x-ambient-delivery-id', 'x-warp-delivery-id'];
const PRINTABLE = /^[\x21-\x7e]{1,200}$/;

/**
 * Which delivery this is, in the seed's order: the webhook's configured header; the provider's
 * own id (the signed `webhook-id` / `svix-id`, `X-GitHub-Delivery`, the event id …); a sender-set
 * `X-Ambient-Delivery-Id` / `X-Warp-Delivery-Id`; else the SHA-256 of the body, so identical
 * bodies without an id are duplicates. Ids that are not short printable ASCII are hashed. Beside
 * that id, a verified signature yields `contentKey`, what the signature covers: the signed id
 * where the scheme signs one (so a sender's retry, re-signed with a new timestamp, is the same
 * delivery), else the digest of the signed content; and the provider's unsigned id and the
 * sender's id are keys of their own whenever sent, even when an earlier one in the order names the
 * delivery. A delivery is a duplicate when any of its keys was accepted before.
 */
export function deliveryIdentity(args: {
  header: (name: string) => string | undefined;
  configuredHeader: string | null;
  verifier: SignatureVerifier | null;
  signed: SignedContent | null;
  json: unknown;
  body: Buffer;
}): DeliveryIdentity {
  const { header, signed } = args;
  const signedId = signed?.id !== undefined && present(signed.id) ? signed.id : undefined;
  const provider =
    signedId === undefined ? args.verifier?.deliveryId?.(header, args.json) : undefined;
  const sender = SENDER_ID_HEADERS.map((name) => header(name)).find(present);
  const keys = {
    contentKey: signed ? signatureKey(signed, signedId) : null,
    providerKey: present(provider) ? normalise(provider) : null,
    senderKey: sender !== undefined ? normalise(sender) : null,
  };
  const configured = args.configuredHeader ? header(args.configuredHeader) : undefined;
  if (present(configured)) {
    return { id: normalise(configured), source: 'configured_header', ...keys };
  }
  if (signedId !== undefined) return { id: normalise(signedId), source: 'signed_id', ...keys };
  if (keys.providerKey !== null) return { id: keys.providerKey, source: 'provider', ...keys };
  if (keys.senderKey !== null) return { id: keys.senderKey, source: 'sender_header', ...keys };
  return { id: `body-sha256:${sha256(args.body)}`, source: 'body_hash', ...keys };
}

/** `signed-id:<hex>` of a signed id, else `signed-sha256:<hex>` of the signed bytes. */
function signatureKey(signed: SignedContent, signedId: string | undefined): string {
  return signedId !== undefined
    ? `signed-id:${sha256(Buffer.from(signedId.trim(), 'utf8'))}`
    : `signed-sha256:${sha256(signed.content)}`;
}

function present(value: string | undefined): value is string {
  return value !== undefined && value.trim() !== '';
}

function normalise(value: string): string {
  const trimmed = value.trim();
  return PRINTABLE.test(trimmed) ? trimmed : `sha256:${sha256(Buffer.from(trimmed, 'utf8'))}`;
}

function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}
