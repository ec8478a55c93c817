/** A registered scheme's name (built-in or from an extension: see SignatureVerifierRegistry). */
export type SignatureScheme = string;

/** Standard Webhooks and Stripe refuse signatures older (or newer) than this. */
export const REPLAY_TOLERANCE_SECONDS = 5 * 60;

export interface SignedRequest {
  /** The raw body exactly as received: every scheme signs the bytes, not a re-serialisation. */
  body: Buffer;
  /** A request header by (case-insensitive) name. */
  header(name: string): string | undefined;
  secret: string;
  nowMs: number;
}

/** What a verified signature vouches for: the replay guard keys on exactly this. */
export interface SignedContent {
  /** The delivery id the signature covers (Standard Webhooks / Svix), from the verified set. */
  id?: string;
  /** The bytes the MAC covers: the body, with the signed timestamp (and id) where there is one. */
  content: Buffer;
}

export type Verification = { ok: true; signed: SignedContent } | { ok: false; reason: string };

/**
 * One provider's signature scheme: verification plus, for schemes whose signature covers no id,
 * the provider's own (unsigned or body) delivery id.
 */
export interface SignatureVerifier {
  readonly scheme: SignatureScheme;
  /** Headers that carry credentials: never usable as a deliveryIdHeader. */
  readonly credentialHeaders: readonly string[];
  verify(request: SignedRequest): Verification;
  /**
   * The provider's delivery id, from a header or (after verification) the parsed body. Absent
   * for schemes whose signature covers the id: the signed id is then the provider's id.
   */
  deliveryId?(header: (name: string) => string | undefined, body: unknown): string | undefined;
  /** Why a secret value cannot be used with this scheme, or null when it can. */
  checkSecret(secret: string): string | null;
}

export function verified(content: Buffer, id?: string): Verification {
  return { ok: true, signed: id === undefined ? { content } : { id, content } };
}

export function unsigned(what: string): Verification {
  return { ok: false, reason: `unsigned request: missing ${what}` };
}

export function bodyField(body: unknown, ...path: string[]): string | undefined {
  let node: unknown = body;
  for (const key of path) {
    if (typeof node !== 'object' || node === null || Array.isArray(node)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return typeof node === 'string' && node !== '' ? node : undefined;
}

export function nonEmptySecret(secret: string): string | null {
  return secret.trim() === '' ? 'the secret is empty' : null;
}
