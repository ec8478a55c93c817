import { runHasArtifactOfType } from '../artifacts';
import { EMPTY_ENVIRONMENT, RunListParams, RunSortField, SortOrder } from './run-list.params';
import { RunCursorPosition } from './run-list.cursor';
import { RunSearch } from './run-list.search';

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

/**
 * Whether a page sorted this way can be read with its rows in one statement (buildRunRowsQuery),
 * whose outer ORDER BY must put the rows in the index's order. It does for the DATETIME sorts. A
 * string's filesort key is cut at `max_sort_length` bytes of collation weights (1024 by default,
 * a server setting), so two long titles or skills equal within it would come back ordered by id
 * alone, not as the keyset read them, and the cursor be taken from the wrong row: pages would
 * skip runs. Those sorts read the ids first, then the rows by primary key.
 */
export function pageRowsInOneStatement(sortBy: RunSortField): boolean {
  return sortBy === 'updated_at' || sortBy === 'created_at';
}

/**
 * The page segment's runs in one statement, a deferred join: the id-only page query (which stays
 * index-only: a derived table with a LIMIT is materialised, not merged) joined back to `runs` by
 * primary key for `columns` (`r0`.…), its sort value as `page_sort_value`, in the page's order.
 * One round trip instead of the ids' and then the rows'. Only for pageRowsInOneStatement's sorts.
 */
export function buildRunRowsQuery(input: RunPageQueryInput, columns: string): SqlQuery {
  const page = buildRunPageQuery(input);
  const direction = input.params.sortOrder === 'asc' ? 'ASC' : 'DESC';
  const order = input.segment.column
    ? `p.sort_value ${direction}, p.id ${direction}`
    : `p.id ${direction}`;
  return {
    sql:
      `SELECT p.sort_value AS page_sort_value, ${columns} ` +
      `FROM (${page.sql}) p JOIN runs r0 ON r0.id = p.id ORDER BY ${order}`,
    params: page.params,
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
    const artifact = runHasArtifactOfType('r.id', teamId, p.artifactType);
    where.add(artifact.sql, ...artifact.params);
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
