import { createHash } from 'node:crypto';
import type { SignatureVerifier, SignedContent } from '../modules/webhooks/verifiers';

export type IdentitySource =
  'signed_id' | 'configured_header' | 'provider' | 'sender_header' | 'body_hash';

export interface DeliveryIdentity {
  id: string;
  source: IdentitySource;
  /**
   * For signatures that cover no id: a digest of what the signature covers. A second dedup key
   * beside `id`, so a captured request re-sent with another unsigned id is still a duplicate.
   */
  contentKey: string | null;
}

/** Headers a sender may set to name its delivery (Warp's name is accepted too). */
export const SENDER_ID_HEADERS = ['x-ambient-delivery-id', 'x-warp-delivery-id'];
const PRINTABLE = /^[\x21-\x7e]{1,200}$/;

/**
 * Which delivery this is. When the verified signature covers an id (Standard Webhooks, Svix),
 * that id and nothing else. Otherwise, in order: the webhook's configured header; the provider's
 * own id (`X-GitHub-Delivery`, the event id …); a sender-set `X-Ambient-Delivery-Id` /
 * `X-Warp-Delivery-Id`; else the SHA-256 of the body, so identical bodies without an id are
 * duplicates. Ids that are not short printable ASCII are hashed. Those ids are not signed, so a
 * verified signature also yields `contentKey`, the digest of the signed content.
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
  if (signed?.id !== undefined && present(signed.id)) {
    return { id: normalise(signed.id), source: 'signed_id', contentKey: null };
  }
  const contentKey = signed ? `signed-sha256:${sha256(signed.content)}` : null;
  const configured = args.configuredHeader ? header(args.configuredHeader) : undefined;
  if (present(configured)) {
    return { id: normalise(configured), source: 'configured_header', contentKey };
  }
  const provider = args.verifier?.deliveryId?.(header, args.json);
  if (present(provider)) return { id: normalise(provider), source: 'provider', contentKey };
  for (const name of SENDER_ID_HEADERS) {
    const value = header(name);
    if (present(value)) return { id: normalise(value), source: 'sender_header', contentKey };
  }
  return { id: `body-sha256:${sha256(args.body)}`, source: 'body_hash', contentKey };
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
