import { randomBytes, randomUUID } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * Random bytes are drawn from the CSPRNG 4 KiB at a time and handed out once each (as
 * `randomUUID` does): one `randomBytes` call per id cost a request ≈ 1 % of its CPU on the hot
 * paths (each id of run creation and the request id).
 */
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let poolOffset = 0;

function pooledRandomBytes(count: number): Buffer {
  if (count > POOL_BYTES) return randomBytes(count);
  if (poolOffset + count > pool.length) {
    pool = randomBytes(POOL_BYTES);
    poolOffset = 0;
  }
  const bytes = pool.subarray(poolOffset, poolOffset + count);
  poolOffset += count;
  return bytes;
}

/** `count` random bytes as lowercase hex (a request id: 16 bytes, shaped like a trace id). */
export function randomHex(count: number): string {
  return pooledRandomBytes(count).toString('hex');
}

/** A random identifier of `length` characters of [A-Za-z0-9] (22 characters ≈ 131 bits). */
export function newUid(length = 22): string {
  const bytes = pooledRandomBytes(length * 2);
  let out = '';
  for (let i = 0; i < bytes.length && out.length < length; i++) {
    // 248 = 4 × 62: rejecting larger bytes keeps every character equally likely.
    if (bytes[i] < 248) out += BASE62[bytes[i] % 62];
  }
  return out.length === length ? out : newUid(length);
}

export function newUuid(): string {
  return randomUUID();
}

export const UID_PATTERN = /^[A-Za-z0-9]{22}$/;
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A bearer secret of 32 random bytes in base64url (43 characters) that never starts with `-`: users
 * paste such tokens as a CLI flag's value (`--token <value>`), and an argument starting with `-`
 * reads as another flag.
 */
export function newSecretToken(): string {
  for (;;) {
    const token = randomBytes(32).toString('base64url');
    if (!token.startsWith('-')) return token;
  }
}
