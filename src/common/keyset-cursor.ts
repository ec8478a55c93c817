import { ApiError } from './errors/api-error';
import { filterHash } from './filter-hash';
import { parseRfc3339 } from './time';

const MAX_CURSOR_LENGTH = 512;

/** Where a page of a newest-first list ended: its last row's time and id. */
export interface KeysetPosition {
  at: Date;
  id: string;
}

/**
 * An opaque cursor over (time, id) that carries a hash of the list's filters, so a cursor used
 * with other filters than it was issued for is refused.
 */
export function encodeKeysetCursor(filters: object, position: KeysetPosition): string {
  const payload = { v: 1, t: position.at.toISOString(), i: position.id, f: filterHash(filters) };
  return Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
}

/** Decodes a cursor, refused (400 naming `cursor`) unless this list issued it for `filters`. */
export function decodeKeysetCursor(text: string, filters: object): KeysetPosition {
  const malformed = ApiError.invalid('cursor', 'is not a cursor this list returned');
  if (text.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(text)) throw malformed;
  let payload: { v?: unknown; t?: unknown; i?: unknown; f?: unknown };
  try {
    payload = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as typeof payload;
  } catch {
    throw malformed;
  }
  const at = typeof payload?.t === 'string' ? parseRfc3339(payload.t) : null;
  if (payload?.v !== 1 || !at || typeof payload.i !== 'string' || !payload.i) throw malformed;
  if (payload.f !== filterHash(filters)) {
    throw ApiError.invalid('cursor', 'does not match the filters it was issued for');
  }
  return { at, id: payload.i };
}
