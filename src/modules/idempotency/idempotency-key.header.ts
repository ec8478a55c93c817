import { createHash } from 'node:crypto';
import { ApiError } from '../../common/errors/api-error';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/** Printable ASCII without leading or trailing blanks (what a UUID or any token a client makes is). */
const KEY_PATTERN = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

/**
 * The key of an `Idempotency-Key` header, or undefined when none was sent. The IETF draft sends
 * it as a structured-field string (`"…"`); a bare token (as Stripe's clients send it) is the same
 * key. Empty, longer than 255 characters or not printable ASCII → 400 naming the header.
 */
export function parseIdempotencyKey(raw: string | string[] | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const text = Array.isArray(raw) ? raw.join(', ') : raw;
  const quoted = /^"(.*)"$/.exec(text.trim());
  const key = quoted ? quoted[1] : text.trim();
  if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw ApiError.invalid(
      IDEMPOTENCY_KEY_HEADER,
      `must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters (got ${key.length})`,
    );
  }
  if (!KEY_PATTERN.test(key)) {
    throw ApiError.invalid(IDEMPOTENCY_KEY_HEADER, 'must be printable ASCII characters');
  }
  return key;
}

/** SHA-256 (hex) of what makes two requests the same: method, path with query, and JSON body. */
export function requestDigest(method: string, path: string, body: unknown): string {
  return createHash('sha256')
    .update(`${method.toUpperCase()}\n${path}\n${JSON.stringify(body ?? null)}`)
    .digest('hex');
}
