import { ApiError } from '../../common/errors/api-error';
import { filterHash } from '../../common/filter-hash';
import { parseRfc3339 } from '../../common/time';
import { Run } from './entities/run.entity';
import {
  RUN_SORT_FIELDS,
  RunListParams,
  RunSortField,
  SORT_ORDERS,
  SortOrder,
} from './run-list.params';

const MAX_CURSOR_LENGTH = 2048;

/** The row fields a cursor position can be taken from. */
export type RunCursorRow = Pick<Run, 'id' | 'createdAt' | 'updatedAt' | 'title' | 'skillSpec'>;

/** Where a page ended: the last row's sort value (null = a run without a skill) and id. */
export interface RunCursorPosition {
  value: Date | string | null;
  id: string;
}

interface CursorPayload {
  v: 1;
  s: RunSortField;
  o: SortOrder;
  k: string | null;
  i: string;
  f: string;
}

/** A short hash of every filter (not the cursor, limit or sort), insensitive to value order. */
export function runListFilterHash(params: RunListParams): string {
  const {
    limit: _limit,
    cursor: _cursor,
    sortBy: _sortBy,
    sortOrder: _sortOrder,
    ...filters
  } = params;
  return filterHash(filters);
}

export function runCursorPosition(sortBy: RunSortField, row: RunCursorRow): RunCursorPosition {
  const value = {
    created_at: row.createdAt,
    updated_at: row.updatedAt,
    title: row.title,
    agent: row.skillSpec,
  }[sortBy];
  return { value, id: row.id };
}

export function encodeRunCursor(params: RunListParams, position: RunCursorPosition): string {
  const { value } = position;
  const payload: CursorPayload = {
    v: 1,
    s: params.sortBy,
    o: params.sortOrder,
    k: value instanceof Date ? value.toISOString() : value,
    i: position.id,
    f: runListFilterHash(params),
  };
  return Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
}

/** Decodes a cursor and checks that it was issued for the same sort and filters as `params`. */
export function decodeRunCursor(text: string, params: RunListParams): RunCursorPosition {
  const payload = readPayload(text);
  if (
    payload.s !== params.sortBy ||
    payload.o !== params.sortOrder ||
    payload.f !== runListFilterHash(params)
  ) {
    throw ApiError.invalid('cursor', 'does not match the filters it was issued for');
  }
  return { value: positionValue(payload), id: payload.i };
}

export function malformed(): ApiError {
  return ApiError.invalid('cursor', 'is malformed');
}

function readPayload(text: string): CursorPayload {
  if (text.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(text)) throw malformed();
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw malformed();
  }
  const p = payload as Partial<CursorPayload> | null;
  const valid =
    typeof p === 'object' &&
    p !== null &&
    p.v === 1 &&
    (RUN_SORT_FIELDS as readonly unknown[]).includes(p.s) &&
    (SORT_ORDERS as readonly unknown[]).includes(p.o) &&
    (typeof p.k === 'string' || p.k === null) &&
    typeof p.i === 'string' &&
    /^[\x21-\x7e]{1,36}$/.test(p.i) &&
    typeof p.f === 'string';
  if (!valid) throw malformed();
  return p as CursorPayload;
}

function positionValue(payload: CursorPayload): Date | string | null {
  if (payload.s === 'created_at' || payload.s === 'updated_at') {
    const date = payload.k === null ? null : parseRfc3339(payload.k);
    if (!date) throw malformed();
    return date;
  }
  if (payload.s === 'title' && payload.k === null) throw malformed();
  return payload.k;
}
