import { decodeKeysetCursor, KeysetPosition } from '../../common/keyset-cursor';
import { optionalEnum, pageLimit, RawQuery, singleValue } from '../../common/query-params';

export const INBOX_STATES = ['pending', 'decided', 'all'] as const;
export type InboxState = (typeof INBOX_STATES)[number];
export const DEFAULT_INBOX_PAGE = 50;
export const MAX_INBOX_PAGE = 200;

export interface InboxParams {
  state: InboxState;
  limit: number;
  /** The last request of the previous page (by `requested_at`, id). */
  after?: KeysetPosition;
}

/** The query of GET /agent/approvals; a bad value is refused with the parameter named. */
export function parseInboxParams(raw: RawQuery): InboxParams {
  const state = optionalEnum(raw, 'state', INBOX_STATES) ?? 'pending';
  const limit = pageLimit(singleValue(raw, 'limit'), DEFAULT_INBOX_PAGE, MAX_INBOX_PAGE);
  const cursor = singleValue(raw, 'cursor');
  return { state, limit, ...(cursor ? { after: decodeKeysetCursor(cursor, { state }) } : {}) };
}
