import { ApiError } from '../../common/errors/api-error';
import { filterHash } from '../../common/filter-hash';
import { parseRfc3339 } from '../../common/time';
import type { AuditEventFilters } from './audit-events.params';

const MAX_CURSOR_LENGTH = 512;

/** Where a page of the audit log (newest first) ended: its last event's time and id. */
export interface AuditCursorPosition {
  occurredAt: Date;
  id: string;
}

export function encodeAuditCursor(filters: AuditEventFilters, at: AuditCursorPosition): string {
  const payload = { v: 1, t: at.occurredAt.toISOString(), i: at.id, f: filterHash(filters) };
  return Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
}

/** Decodes a cursor, refused unless this list issued it for the same filters. */
export function decodeAuditCursor(text: string, filters: AuditEventFilters): AuditCursorPosition {
  const malformed = ApiError.invalid('cursor', 'is not a cursor this list returned');
  if (text.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(text)) throw malformed;
  let payload: { v?: unknown; t?: unknown; i?: unknown; f?: unknown };
  try {
    payload = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as typeof payload;
  } catch {
    throw malformed;
  }
  const occurredAt = typeof payload?.t === 'string' ? parseRfc3339(payload.t) : null;
  if (payload?.v !== 1 || !occurredAt || typeof payload.i !== 'string' || !payload.i) {
    throw malformed;
  }
  if (payload.f !== filterHash(filters)) {
    throw ApiError.invalid('cursor', 'does not match the filters it was issued for');
  }
  return { occurredAt, id: payload.i };
}
