import { decodeKeysetCursor, encodeKeysetCursor } from '../../common/keyset-cursor';
import type { AuditEventFilters } from './audit-events.params';

/** Where a page of the audit log (newest first) ended: its last event's time and id. */
export interface AuditCursorPosition {
  occurredAt: Date;
  id: string;
}

export function encodeAuditCursor(filters: AuditEventFilters, at: AuditCursorPosition): string {
  return encodeKeysetCursor(filters, { at: at.occurredAt, id: at.id });
}

/** Decodes a cursor, refused unless this list issued it for the same filters. */
export function decodeAuditCursor(text: string, filters: AuditEventFilters): AuditCursorPosition {
  const { at, id } = decodeKeysetCursor(text, filters);
  return { occurredAt: at, id };
}
