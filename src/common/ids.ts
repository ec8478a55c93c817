import { randomBytes, randomUUID } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** A random identifier of `length` characters of [A-Za-z0-9] (22 characters ≈ 131 bits). */
export function newUid(length = 22): string {
  const bytes = randomBytes(length * 2);
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
