import { createHmac, timingSafeEqual } from 'node:crypto';

export function hmacHex(algorithm: 'sha256' | 'sha1', key: string | Buffer, data: Buffer | string) {
  return createHmac(algorithm, key).update(data).digest('hex');
}

/**
 * Compares two strings in time that depends only on their lengths (which, for hex digests of one
 * algorithm, are public). Hex case is ignored, as providers may send either.
 */
export function constantTimeEqualHex(expected: string, presented: string): boolean {
  const a = Buffer.from(expected.toLowerCase(), 'utf8');
  const b = Buffer.from(presented.trim().toLowerCase(), 'utf8');
  if (a.length !== b.length) {
    timingSafeEqual(a, a); // spend the same work either way
    return false;
  }
  return timingSafeEqual(a, b);
}

/** Compares secrets (bearer tokens, URL tokens) without leaking where they differ. */
export function constantTimeEqualText(expected: string, presented: string): boolean {
  const a = Buffer.from(expected, 'utf8');
  const b = Buffer.from(presented, 'utf8');
  if (a.length !== b.length) {
    timingSafeEqual(a, a);
    return false;
  }
  return timingSafeEqual(a, b);
}

/** True when any of the presented hex signatures equals the expected one. */
export function anyHexMatches(expected: string, presented: readonly string[]): boolean {
  let matched = false;
  for (const candidate of presented) matched = constantTimeEqualHex(expected, candidate) || matched;
  return matched;
}
