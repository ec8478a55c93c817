import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createHash } from 'node:crypto';
import { DataSource, In } from 'typeorm';
import { ApiError } from '../../common/errors/api-error';
import { UID_PATTERN, UUID_PATTERN } from '../../common/ids';
import { parseRfc3339 } from '../../common/time';
import { ARTIFACT_TYPES, ArtifactType } from '../artifacts/run-artifact.entity';
import { Run } from './entities/run.entity';
import { RUN_SOURCES, RUN_STATES, RunSource, RunState } from './run-state';

export const RUN_SORT_FIELDS = ['updated_at', 'created_at', 'title', 'agent'] as const;
export type RunSortField = (typeof RUN_SORT_FIELDS)[number];
export const SORT_ORDERS = ['desc', 'asc'] as const;
export type SortOrder = (typeof SORT_ORDERS)[number];
export const EXECUTION_LOCATIONS = ['LOCAL', 'REMOTE'] as const;
export type ExecutionLocation = (typeof EXECUTION_LOCATIONS)[number];

export const EMPTY_ENVIRONMENT = 'empty-environment';
export const DEFAULT_RUN_LIST_LIMIT = 20;
export const MAX_RUN_LIST_LIMIT = 500;
export const MAX_METADATA_FILTERS = 5;
const MAX_Q_LENGTH = 256;
const MAX_FILTER_LENGTH = 1024;
const MAX_CURSOR_LENGTH = 2048;
const METADATA_KEY = /^[a-zA-Z0-9._-]{1,64}$/;
const MAX_METADATA_VALUE_BYTES = 256;

export interface RunListParams {
  limit: number;
  cursor?: string;
  sortBy: RunSortField;
  sortOrder: SortOrder;
  states?: RunState[];
  sources?: RunSource[];
  executionLocation?: ExecutionLocation;
  name?: string;
  modelId?: string;
  creator?: string;
  executor?: string;
  createdAfter?: Date;
  createdBefore?: Date;
  updatedAfter?: Date;
  environmentId?: string;
  skillSpec?: string;
  scheduleId?: string;
  ancestorRunId?: string;
  artifactType?: ArtifactType;
  q?: string;
  metadata?: Record<string, string>;
}

export interface RunListPage {
  runs: Run[];
  nextCursor: string | null;
}

// ---------------------------------------------------------------------------------------------
// Query-string parsing
// ---------------------------------------------------------------------------------------------

type RawQuery = Record<string, unknown>;

/**
 * Validates the raw Express query of GET /agent/runs. Unknown parameters (newer SDK filters such
 * as factory_uid or task_status) are ignored; documented ones are checked strictly.
 */
export function parseRunListParams(
  raw: RawQuery,
  opts: { metadataFilterEnabled: boolean },
): RunListParams {
  const params: RunListParams = {
    limit: parseLimit(single(raw, 'limit')),
    cursor: single(raw, 'cursor'),
    sortBy: optionalEnum(raw, 'sort_by', RUN_SORT_FIELDS) ?? 'updated_at',
    sortOrder: optionalEnum(raw, 'sort_order', SORT_ORDERS) ?? 'desc',
    states: enumList(raw, 'state', RUN_STATES),
    sources: enumList(raw, 'source', RUN_SOURCES),
    executionLocation: optionalEnum(raw, 'execution_location', EXECUTION_LOCATIONS),
    name: filterText(raw, 'name'),
    modelId: filterText(raw, 'model_id'),
    creator: filterText(raw, 'creator'),
    executor: filterText(raw, 'executor'),
    createdAfter: timestamp(raw, 'created_after', 'floor'),
    createdBefore: timestamp(raw, 'created_before', 'ceil'),
    updatedAfter: timestamp(raw, 'updated_after', 'floor'),
    environmentId: environmentId(single(raw, 'environment_id')),
    skillSpec: skillSpec(raw),
    scheduleId: filterText(raw, 'schedule_id'),
    ancestorRunId: filterText(raw, 'ancestor_run_id'),
    artifactType: optionalEnum(raw, 'artifact_type', ARTIFACT_TYPES),
    q: searchText(single(raw, 'q')),
    metadata: metadataFilters(raw, opts.metadataFilterEnabled),
  };
  return withoutUndefined(params);
}

/** Every value given for `name`; an empty string counts as not given. */
function values(raw: RawQuery, name: string): string[] {
  const value = raw[name];
  if (value === undefined || value === null) return [];
  const list = Array.isArray(value) ? value : [value];
  for (const item of list) {
    if (typeof item !== 'string') throw ApiError.invalid(name, 'must be a plain string value');
  }
  return (list as string[]).filter((item) => item !== '');
}

function single(raw: RawQuery, name: string): string | undefined {
  const list = values(raw, name);
  if (list.length > 1) throw ApiError.invalid(name, 'must be given at most once');
  return list[0];
}

function quote(value: string): string {
  return JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value);
}

function checkEnum<T extends string>(name: string, value: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value)) {
    throw ApiError.invalid(name, `must be one of ${allowed.join(', ')} (got ${quote(value)})`);
  }
  return value as T;
}

function optionalEnum<T extends string>(
  raw: RawQuery,
  name: string,
  allowed: readonly T[],
): T | undefined {
  const value = single(raw, name);
  return value === undefined ? undefined : checkEnum(name, value, allowed);
}

function enumList<T extends string>(
  raw: RawQuery,
  name: string,
  allowed: readonly T[],
): T[] | undefined {
  const list = values(raw, name).map((value) => checkEnum(name, value, allowed));
  return list.length ? [...new Set(list)] : undefined;
}

function parseLimit(text: string | undefined): number {
  if (text === undefined) return DEFAULT_RUN_LIST_LIMIT;
  const n = /^\d{1,6}$/.test(text) ? Number(text) : NaN;
  if (!(n >= 1 && n <= MAX_RUN_LIST_LIMIT)) {
    throw ApiError.invalid('limit', `must be an integer from 1 to ${MAX_RUN_LIST_LIMIT}`);
  }
  return n;
}

function filterText(raw: RawQuery, name: string): string | undefined {
  const value = single(raw, name);
  if (value !== undefined && value.length > MAX_FILTER_LENGTH) {
    throw ApiError.invalid(name, `must be at most ${MAX_FILTER_LENGTH} characters`);
  }
  return value;
}

/**
 * Stored timestamps have millisecond precision; a bound with finer digits is rounded so that the
 * strict comparison keeps its meaning (`after` rounds down, `before` rounds up).
 */
function timestamp(raw: RawQuery, name: string, rounding: 'floor' | 'ceil'): Date | undefined {
  const text = single(raw, name);
  if (text === undefined) return undefined;
  const date = parseRfc3339(text);
  if (!date) {
    throw ApiError.invalid(name, 'must be an RFC 3339 timestamp such as 2026-01-31T12:00:00Z');
  }
  const subMillis = /\.\d{3}(\d+)/.exec(text)?.[1] ?? '';
  if (rounding === 'ceil' && /[1-9]/.test(subMillis)) return new Date(date.getTime() + 1);
  return date;
}

function environmentId(value: string | undefined): string | undefined {
  if (value === undefined || value === EMPTY_ENVIRONMENT || UID_PATTERN.test(value)) return value;
  throw ApiError.invalid(
    'environment_id',
    `must be 22 characters of [A-Za-z0-9] or "${EMPTY_ENVIRONMENT}"`,
  );
}

function skillSpec(raw: RawQuery): string | undefined {
  const spec = filterText(raw, 'skill_spec');
  const alias = filterText(raw, 'skill');
  if (spec !== undefined && alias !== undefined && spec !== alias) {
    throw ApiError.invalid('skill', 'is an alias of skill_spec and must not differ from it');
  }
  return spec ?? alias;
}

function searchText(value: string | undefined): string | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  if (Array.from(text).length > MAX_Q_LENGTH) {
    throw ApiError.invalid('q', `must be at most ${MAX_Q_LENGTH} characters`);
  }
  return text;
}

/** `metadata[key]=value` pairs (simple parser) or a nested `metadata` object (extended parser). */
function metadataFilters(raw: RawQuery, enabled: boolean): Record<string, string> | undefined {
  const entries = metadataEntries(raw);
  if (!entries.length) return undefined;
  if (!enabled) {
    throw new ApiError('feature_not_available', 'metadata filtering is disabled on this server');
  }
  const pairs: Record<string, string> = {};
  for (const [key, value] of entries) {
    if (!METADATA_KEY.test(key)) {
      throw ApiError.invalid(
        'metadata',
        `key ${quote(key)} must be 1-64 characters of [a-zA-Z0-9._-]`,
      );
    }
    const text = metadataValue(key, value);
    if (key in pairs && pairs[key] !== text) {
      throw ApiError.invalid(`metadata[${key}]`, 'must be given at most once');
    }
    pairs[key] = text;
  }
  if (Object.keys(pairs).length > MAX_METADATA_FILTERS) {
    throw ApiError.invalid('metadata', `at most ${MAX_METADATA_FILTERS} pairs may be given`);
  }
  return pairs;
}

function metadataEntries(raw: RawQuery): [string, unknown][] {
  const entries: [string, unknown][] = [];
  for (const [name, value] of Object.entries(raw)) {
    const match = /^metadata\[(.*)\]$/s.exec(name);
    if (match) entries.push([match[1], value]);
  }
  const nested = raw.metadata;
  if (nested === undefined || nested === null || nested === '') return entries;
  if (typeof nested !== 'object' || Array.isArray(nested)) {
    throw ApiError.invalid('metadata', 'must be given as metadata[key]=value');
  }
  return entries.concat(Object.entries(nested));
}

function metadataValue(key: string, value: unknown): string {
  const name = `metadata[${key}]`;
  const list = Array.isArray(value) ? value : [value];
  if (list.length > 1) throw ApiError.invalid(name, 'must be given at most once');
  const text: unknown = list[0];
  if (typeof text !== 'string') throw ApiError.invalid(name, 'must be a plain string value');
  if (Buffer.byteLength(text, 'utf8') > MAX_METADATA_VALUE_BYTES || text.includes('\0')) {
    throw ApiError.invalid(name, 'must be at most 256 bytes of UTF-8 without NUL characters');
  }
  return text;
}

function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

// ---------------------------------------------------------------------------------------------
// Cursor codec
// ---------------------------------------------------------------------------------------------

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
  return createHash('sha256')
    .update(JSON.stringify(canonical(filters)))
    .digest('base64url')
    .slice(0, 22);
}

function canonical(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(canonical).sort();
  if (value && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    return Object.keys(record)
      .filter((key) => record[key] !== undefined)
      .sort()
      .map((key) => [key, canonical(record[key])]);
  }
  return value;
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

function malformed(): ApiError {
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

// ---------------------------------------------------------------------------------------------
// Full-text search term
// ---------------------------------------------------------------------------------------------

/** InnoDB's default innodb_ft_min/max_token_size: other words are never indexed. */
const MIN_TOKEN_CHARS = 3;
const MAX_TOKEN_CHARS = 84;
/** InnoDB's default stopword list: such words are not indexed, so requiring one matches nothing. */
const STOPWORDS = new Set(
  (
    'a about an are as at be by com de en for from how i in is it la of on or that the this to ' +
    'was what when where who will with und www'
  ).split(' '),
);

export interface RunSearch {
  /** A run id the search names directly (a UUID or a run URL), lower-cased. */
  runId: string | null;
  /** A BOOLEAN MODE full-text expression, or null when no word is usable. */
  fullText: string | null;
}

/**
 * Turns `q` into an exact run id (for a UUID or a URL ending in one) and a full-text expression
 * that requires every usable word as a prefix. Boolean operators in the input are dropped.
 */
export function buildRunSearch(q: string): RunSearch {
  const words = q
    .toLowerCase()
    .split(/[^\p{L}\p{N}_]+/u)
    .filter((word) => isIndexedWord(word));
  const unique = [...new Set(words)];
  return {
    runId: runIdIn(q),
    fullText: unique.length ? unique.map((word) => `+${word}*`).join(' ') : null,
  };
}

function isIndexedWord(word: string): boolean {
  const length = Array.from(word).length;
  return length >= MIN_TOKEN_CHARS && length <= MAX_TOKEN_CHARS && !STOPWORDS.has(word);
}

function runIdIn(q: string): string | null {
  if (UUID_PATTERN.test(q)) return q.toLowerCase();
  let url: URL;
  try {
    url = new URL(q);
  } catch {
    return null;
  }
  const last = url.pathname.split('/').filter(Boolean).pop() ?? '';
  return UUID_PATTERN.test(last) ? last.toLowerCase() : null;
}

// ---------------------------------------------------------------------------------------------
// Page query
// ---------------------------------------------------------------------------------------------

export interface SqlQuery {
  sql: string;
  params: unknown[];
}

/**
 * One ordered stretch of the result. Sorting by agent puts runs without a skill last in both
 * directions; instead of ORDER BY (skill_spec IS NULL), which no index serves, the page is filled
 * from the runs with a skill first and then from those without, each in index order.
 */
export interface RunPageSegment {
  column: string | null;
  condition?: string;
}

const SORT_COLUMN: Record<RunSortField, string> = {
  updated_at: 'r.updated_at',
  created_at: 'r.created_at',
  title: 'r.title',
  agent: 'r.skill_spec',
};

export const RUN_PAGE_SEGMENTS: Record<RunSortField, RunPageSegment[]> = {
  updated_at: [{ column: 'r.updated_at' }],
  created_at: [{ column: 'r.created_at' }],
  title: [{ column: 'r.title' }],
  agent: [
    { column: 'r.skill_spec', condition: 'r.skill_spec IS NOT NULL' },
    { column: null, condition: 'r.skill_spec IS NULL' },
  ],
};

export interface RunPageQueryInput {
  teamId: string;
  params: RunListParams;
  search: RunSearch | null;
  segment: RunPageSegment;
  /** Rows strictly after this position; null for the start of the segment. */
  after: RunCursorPosition | null;
  limit: number;
  /** ` FORCE INDEX (...)` or '' (see RunListQuery.indexHint). */
  indexHint?: string;
}

/**
 * The id-only query for one page segment: `SELECT r.id, <sort value> FROM runs r ... ORDER BY
 * <sort column>, r.id LIMIT ?`, fully parameterised. The keyset predicate is written as
 * `a < ? OR (a = ? AND id < ?)`, which MariaDB turns into index ranges (row constructors it does
 * not).
 */
export function buildRunPageQuery(input: RunPageQueryInput): SqlQuery {
  const { teamId, params: p, search, segment } = input;
  const from = new SqlParts();
  const where = new SqlParts();
  where.add('r.team_id = ?', teamId);
  addColumnFilters(where, p);
  addRelationFilters(where, teamId, p);
  if (search) addSearch(from, where, search);
  if (segment.condition) where.add(segment.condition);
  if (input.after) addKeyset(where, segment.column, p.sortOrder, input.after);
  const direction = p.sortOrder === 'asc' ? 'ASC' : 'DESC';
  const order = segment.column
    ? `${segment.column} ${direction}, r.id ${direction}`
    : `r.id ${direction}`;
  return {
    sql:
      `SELECT r.id AS id, ${SORT_COLUMN[p.sortBy]} AS sort_value ` +
      `FROM runs r${input.indexHint ?? ''}${from.parts.join('')} ` +
      `WHERE ${where.parts.join(' AND ')} ORDER BY ${order} LIMIT ?`,
    params: [...from.params, ...where.params, input.limit],
  };
}

class SqlParts {
  readonly parts: string[] = [];
  readonly params: unknown[] = [];

  add(sql: string, ...params: unknown[]): void {
    this.parts.push(sql);
    this.params.push(...params);
  }
}

function placeholders(values: readonly unknown[]): string {
  return values.map(() => '?').join(', ');
}

function addColumnFilters(where: SqlParts, p: RunListParams): void {
  if (p.states) where.add(`r.state IN (${placeholders(p.states)})`, ...p.states);
  if (p.sources) where.add(`r.source IN (${placeholders(p.sources)})`, ...p.sources);
  const equal: [string, string | undefined][] = [
    ['r.execution_location', p.executionLocation],
    ['r.config_name', p.name],
    ['r.model_id', p.modelId],
    ['r.creator_id', p.creator],
    ['r.executor_id', p.executor],
    ['r.skill_spec', p.skillSpec],
    ['r.schedule_id', p.scheduleId],
  ];
  for (const [column, value] of equal) {
    if (value !== undefined) where.add(`${column} = ?`, value);
  }
  if (p.environmentId === EMPTY_ENVIRONMENT) where.add('r.environment_id IS NULL');
  else if (p.environmentId !== undefined) where.add('r.environment_id = ?', p.environmentId);
  if (p.createdAfter) where.add('r.created_at > ?', p.createdAfter);
  if (p.createdBefore) where.add('r.created_at < ?', p.createdBefore);
  if (p.updatedAfter) where.add('r.updated_at > ?', p.updatedAfter);
}

/** Uncorrelated IN subqueries, which MySQL and MariaDB run as index-driven semi-joins. */
function addRelationFilters(where: SqlParts, teamId: string, p: RunListParams): void {
  if (p.ancestorRunId !== undefined) {
    where.add(
      'r.id IN (SELECT ra.run_id FROM run_ancestors ra WHERE ra.ancestor_id = ?)',
      p.ancestorRunId,
    );
  }
  if (p.artifactType) {
    where.add(
      'r.id IN (SELECT rt.run_id FROM run_artifacts rt ' +
        'WHERE rt.team_id = ? AND rt.artifact_type = ?)',
      teamId,
      p.artifactType,
    );
  }
  Object.entries(p.metadata ?? {}).forEach(([key, value], i) => {
    where.add(
      `r.id IN (SELECT rm${i}.run_id FROM run_metadata rm${i} WHERE rm${i}.team_id = ? ` +
        `AND rm${i}.meta_key = ? AND rm${i}.meta_value = ?)`,
      teamId,
      key,
      value,
    );
  });
}

/**
 * Full text alone goes in WHERE, where the FULLTEXT index drives the query. "This id OR full
 * text" in WHERE would make the optimizer evaluate MATCH row by row, so that case joins a derived
 * table holding the union of both lookups (a primary-key hit and a FULLTEXT index scan).
 */
function addSearch(from: SqlParts, where: SqlParts, search: RunSearch): void {
  const match = (alias: string) =>
    `MATCH(${alias}.title, ${alias}.prompt, ${alias}.skill_spec) AGAINST (? IN BOOLEAN MODE)`;
  if (search.runId && search.fullText) {
    from.add(
      ' JOIN (SELECT rs.id FROM runs rs WHERE rs.id = ? ' +
        `UNION SELECT rf.id FROM runs rf WHERE ${match('rf')}) hit ON hit.id = r.id`,
      search.runId,
      search.fullText,
    );
  } else if (search.runId) {
    where.add('r.id = ?', search.runId);
  } else if (search.fullText) {
    where.add(match('r'), search.fullText);
  }
}

function addKeyset(
  where: SqlParts,
  column: string | null,
  order: SortOrder,
  after: RunCursorPosition,
): void {
  const op = order === 'asc' ? '>' : '<';
  if (column === null) where.add(`r.id ${op} ?`, after.id);
  else {
    where.add(
      `(${column} ${op} ? OR (${column} = ? AND r.id ${op} ?))`,
      after.value,
      after.value,
      after.id,
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Service
// ---------------------------------------------------------------------------------------------

interface PageRow {
  id: string;
  sort_value: unknown;
}

/** MySQL's ER_KEY_DOES_NOT_EXITS: an index named in FORCE INDEX is gone (dropped by a migration). */
const KEY_DOES_NOT_EXIST = 1176;

@Injectable()
export class RunListQuery {
  private indexHint: Promise<string> | null = null;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async list(teamId: string, params: RunListParams): Promise<RunListPage> {
    const position = params.cursor ? decodeRunCursor(params.cursor, params) : null;
    if (params.ancestorRunId !== undefined) {
      await this.assertAncestorVisible(teamId, params.ancestorRunId);
    }
    const search = params.q === undefined ? null : buildRunSearch(params.q);
    if (search && !search.runId && !search.fullText) return { runs: [], nextCursor: null };

    const rows = await this.pageRows(teamId, params, search, position);
    const pageRows = rows.slice(0, params.limit);
    const runs = await this.load(
      teamId,
      pageRows.map((row) => row.id),
    );
    const last = pageRows[pageRows.length - 1];
    const nextCursor =
      rows.length > params.limit
        ? encodeRunCursor(params, { value: sortValue(params.sortBy, last), id: last.id })
        : null;
    return { runs, nextCursor };
  }

  /** Up to limit + 1 (id, sort value) rows after `position`, walking the sort's segments. */
  private async pageRows(
    teamId: string,
    params: RunListParams,
    search: RunSearch | null,
    position: RunCursorPosition | null,
  ): Promise<PageRow[]> {
    const segments = RUN_PAGE_SEGMENTS[params.sortBy];
    const start = position
      ? segments.findIndex((s) => (s.column === null) === (position.value === null))
      : 0;
    if (start < 0) throw malformed();
    const rows: PageRow[] = [];
    for (let i = start; i < segments.length && rows.length <= params.limit; i++) {
      const input = {
        teamId,
        params,
        search,
        segment: segments[i],
        after: i === start ? position : null,
        limit: params.limit + 1 - rows.length,
      };
      rows.push(...(await this.queryPage(input)));
    }
    return rows;
  }

  private async queryPage(input: RunPageQueryInput, retried = false): Promise<PageRow[]> {
    const { sql, params } = buildRunPageQuery({ ...input, indexHint: await this.runIndexHint() });
    try {
      return (await this.dataSource.query(sql, params)) as PageRow[];
    } catch (err) {
      if (retried || (err as { errno?: number }).errno !== KEY_DOES_NOT_EXIST) throw err;
      this.indexHint = null;
      return this.queryPage(input, true);
    }
  }

  /**
   * ` FORCE INDEX (<every index of runs>)`: it rules out only the full table scan. Without it
   * MariaDB, costing a keyset range as if every matching row had to be read, prefers walking the
   * (team_id, ...) index from the top, which reads every row before the cursor: seconds on a
   * deep page of a team with a million runs instead of milliseconds. The names are read from the
   * schema so that migrations adding or renaming indexes need no change here.
   */
  private runIndexHint(): Promise<string> {
    this.indexHint ??= this.dataSource
      .query(
        'SELECT DISTINCT INDEX_NAME AS name FROM information_schema.STATISTICS ' +
          "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'runs'",
      )
      .then((rows: { name: string }[]) => {
        const names = rows.map((row) => row.name).filter((name) => /^\w{1,64}$/.test(name));
        return names.length ? ` FORCE INDEX (${names.map((n) => `\`${n}\``).join(', ')})` : '';
      })
      .catch(() => {
        // Without the hint the query is still correct, only slower on deep pages; retry later.
        this.indexHint = null;
        return '';
      });
    return this.indexHint;
  }

  private async load(teamId: string, ids: string[]): Promise<Run[]> {
    if (!ids.length) return [];
    const runs = await this.dataSource.getRepository(Run).findBy({ id: In(ids), teamId });
    const byId = new Map(runs.map((run) => [run.id, run]));
    return ids.map((id) => byId.get(id)).filter((run): run is Run => run !== undefined);
  }

  private async assertAncestorVisible(teamId: string, ancestorRunId: string): Promise<void> {
    const found = await this.dataSource.getRepository(Run).existsBy({ id: ancestorRunId, teamId });
    if (!found) throw ApiError.notFound('ancestor run');
  }
}

/** The page query's raw sort value as a cursor value (DATETIME columns arrive as Date). */
function sortValue(sortBy: RunSortField, row: PageRow): Date | string | null {
  const value = row.sort_value;
  if (value === null || value === undefined) return null;
  if (sortBy === 'created_at' || sortBy === 'updated_at') {
    if (value instanceof Date) return value;
    throw new Error(`run list: expected a Date for ${sortBy}, got ${typeof value}`);
  }
  return String(value);
}
