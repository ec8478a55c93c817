import { createHash, timingSafeEqual } from 'node:crypto';
import { newUid } from '../../common/ids';

const GENERATED = /^amb_([A-Za-z0-9]{12})_[A-Za-z0-9]{32}$/;

/** A new key: `amb_<12-char lookup prefix>_<32-char secret>`, about 190 random bits in all. */
export function generateApiKey(): { key: string; prefix: string } {
  const prefix = newUid(12);
  return { key: `amb_${prefix}_${newUid(32)}`, prefix };
}

/**
 * The indexed lookup prefix of a presented key. Generated keys carry theirs; a key chosen by an
 * operator (AMBIENT_BOOTSTRAP_API_KEY) is looked up by a digest-derived prefix instead.
 */
export function lookupPrefixOf(key: string): string {
  const match = GENERATED.exec(key);
  return match ? match[1] : `x${hashApiKey(key).toString('hex').slice(0, 15)}`;
}

export function hashApiKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

export function hashesEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
