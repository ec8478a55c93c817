import type { Connection } from 'mysql2/promise';

/** Whose runs the seed creates: the team and user of the bench API key. */
export interface SeedOwner {
  teamId: string;
  userId: string;
}

const YEAR_MS = 365 * 24 * 3600 * 1000;
const DIGITS_TABLE = 'bench_digits';
/** Rows per INSERT … SELECT statement (one autocommit transaction each). */
const CHUNK_ROWS = 50_000;

export async function findSeedOwner(connection: Connection): Promise<SeedOwner> {
  const [rows] = await connection.query(
    // The bootstrap key is the first one created.
    'SELECT team_id AS teamId, user_id AS userId FROM api_keys ORDER BY created_at LIMIT 1',
  );
  const owner = (rows as SeedOwner[])[0];
  if (!owner) throw new Error('the bench database has no API key (did the app bootstrap?)');
  return owner;
}

/** A 0…999 helper table; crossed with itself it numbers a million rows (MySQL 8 and MariaDB). */
async function ensureDigits(connection: Connection): Promise<void> {
  await connection.query(`CREATE TABLE IF NOT EXISTS ${DIGITS_TABLE} (n INT NOT NULL PRIMARY KEY)`);
  const [rows] = await connection.query(`SELECT COUNT(*) AS c FROM ${DIGITS_TABLE}`);
  if (Number((rows as { c: number }[])[0].c) === 1000) return;
  const values = Array.from({ length: 1000 }, (_, i) => `(${i})`).join(',');
  await connection.query(`INSERT IGNORE INTO ${DIGITS_TABLE} (n) VALUES ${values}`);
}

/**
 * UUID-shaped ids that ascend with the row number (so the bulk insert appends to the primary key)
 * but are random relative to created_at, as the API's UUIDv4 ids are: a page of the list still
 * fetches its rows from all over the clustered index. `h` is the row's MD5, computed once.
 */
const ID_SQL =
  "CONCAT(LPAD(LOWER(HEX(d.n)), 8, '0'), '-', SUBSTR(d.h, 1, 4), '-4', SUBSTR(d.h, 5, 3), '-a', " +
  "SUBSTR(d.h, 8, 3), '-', SUBSTR(d.h, 11, 12))";
const CONVERSATION_SQL =
  "CONCAT(SUBSTR(d.h, 17, 8), '-', SUBSTR(d.h, 25, 4), '-4', SUBSTR(d.h, 29, 3), '-b', " +
  "SUBSTR(d.h, 1, 3), '-', LPAD(LOWER(HEX(d.n)), 12, '0'))";
/** Uniform over [0, 100), [0, 1000) and the year, from distinct digits of the row's MD5. */
const PERCENT_SQL = 'MOD(CONV(SUBSTR(d.h, 1, 6), 16, 10), 100)';
const MILLE_SQL = 'MOD(CONV(SUBSTR(d.h, 19, 6), 16, 10), 1000)';
const AGE_MS_SQL = `MOD(CONV(SUBSTR(d.h, 7, 12), 16, 10), ${YEAR_MS})`;

// Terminal states only: a seeded QUEUED or CLAIMED run would be picked up by a worker's sweeper.
const STATE_SQL = `CASE
  WHEN s.p < 68 THEN 'SUCCEEDED' WHEN s.p < 80 THEN 'FAILED' WHEN s.p < 86 THEN 'ERROR'
  WHEN s.p < 96 THEN 'CANCELLED' ELSE 'BLOCKED' END`;

const PROMPTS = [
  'Fix the flaky integration test in the payments service and open a pull request',
  'Upgrade the logging library across the monorepo and make sure the build stays green',
  'Investigate the memory leak reported in the worker pool and propose a patch',
  'Write unit tests for the invoice rounding rules, including the negative amounts',
  'Triage the new Sentry errors from last night and summarise the root causes',
  'Refactor the authentication middleware to use the shared token validator',
  'Review the open dependabot pull requests and merge the safe ones',
  'Add pagination to the admin users endpoint and document the cursor format',
];
const SOURCES = [
  'API',
  'API',
  'SLACK',
  'LINEAR',
  'SCHEDULED_AGENT',
  'GITHUB_ACTION',
  'CLI',
  'WEB_APP',
];
const SKILLS = ['acme/deploy-helper', 'acme/test-fixer', 'acme/triage'];

const quoted = (values: string[]): string =>
  values.map((v) => `'${v.replace(/'/g, "''")}'`).join(',');

function insertSql(owner: SeedOwner): string {
  const skill = `CASE WHEN s.q % 5 = 0 THEN ELT(1 + s.q % 3, ${quoted(SKILLS)}) END`;
  const prompt = `ELT(1 + s.q % ${PROMPTS.length}, ${quoted(PROMPTS)})`;
  const finished = 's.created + INTERVAL (30 + s.p * 6) SECOND';
  // The LIMITs keep MariaDB from merging the derived tables, which would recompute MD5 per use.
  return `INSERT INTO runs (id, team_id, creator_id, executor_id, title, prompt, state, source,
      execution_location, mode, config, config_name, model_id, environment_id, skill_spec,
      parent_run_id, root_run_id, depth, conversation_id, status_message, request_usage,
      interactive, execution_count, attempt, started_at, finished_at, created_at, updated_at)
    SELECT s.id, '${owner.teamId}', '${owner.userId}', '${owner.userId}',
      LEFT(${prompt}, 80), ${prompt}, ${STATE_SQL}, ELT(1 + s.q % ${SOURCES.length}, ${quoted(SOURCES)}),
      'REMOTE', 'normal', JSON_OBJECT('model_id', 'fake-model', 'skill_spec', ${skill}),
      NULL, 'fake-model', NULL, ${skill},
      NULL, s.id, 0, s.conversation_id,
      JSON_OBJECT('message', 'Done.'),
      JSON_OBJECT('total_tokens', 100 + s.p * 37, 'inference_cost_usd', s.p / 1000),
      0, 1, 1,
      s.created + INTERVAL (20 + s.p * 7) * 1000 MICROSECOND, ${finished}, s.created, ${finished}
    FROM (
      SELECT ${ID_SQL} AS id, ${CONVERSATION_SQL} AS conversation_id, ${PERCENT_SQL} AS p, ${MILLE_SQL} AS q,
        ? - INTERVAL ${AGE_MS_SQL} * 1000 MICROSECOND AS created
      FROM (
        SELECT n.n, MD5(CONCAT('run', n.n)) AS h
        FROM (SELECT ? + a.n * 1000 + b.n AS n FROM ${DIGITS_TABLE} a CROSS JOIN ${DIGITS_TABLE} b
              WHERE a.n < ?) n
        WHERE n.n < ?
        LIMIT ${CHUNK_ROWS}
      ) d
      LIMIT ${CHUNK_ROWS}
    ) s
    ORDER BY s.id`;
}

/**
 * Inserts finished runs numbered `firstRow` … `firstRow + count - 1` in the owner's team, created
 * uniformly over the year before `now`, with bulk INSERT … SELECT statements shared out between
 * the given connections (one per core keeps MariaDB busy). Row numbers make the ids, so separate
 * seeds of one table must use separate ranges.
 */
export async function seedRuns(
  connections: Connection[],
  owner: SeedOwner,
  range: { firstRow: number; count: number; now: Date },
): Promise<void> {
  await ensureDigits(connections[0]);
  const sql = insertSql(owner);
  const anchor = range.now.toISOString().replace('T', ' ').replace('Z', '');
  const end = range.firstRow + range.count;
  let next = range.firstRow;
  const worker = async (connection: Connection): Promise<void> => {
    while (next < end) {
      const start = next;
      const rows = Math.min(CHUNK_ROWS, end - start);
      next += rows;
      // Rows start … start + rows - 1: whole thousands from the digits table, cut at the end.
      await connection.query(sql, [anchor, start, Math.ceil(rows / 1000), start + rows]);
    }
  };
  await Promise.all(connections.map(worker));
}

/**
 * Runs `load` with the plain secondary indexes of `runs` dropped, then adds them back exactly as
 * SHOW CREATE TABLE listed them, in one ALTER: a sorted bulk build is far faster than a million
 * random inserts into fifteen B-trees that do not fit the buffer pool. The FULLTEXT index stays.
 */
export async function withDeferredIndexes(
  connection: Connection,
  load: () => Promise<void>,
): Promise<void> {
  const [rows] = await connection.query('SHOW CREATE TABLE runs');
  const ddl = (rows as Record<string, string>[])[0]['Create Table'];
  const keys = [...ddl.matchAll(/^\s*KEY `([^`]+)` (\(.*\)),?$/gm)].map(([, name, columns]) => ({
    name,
    columns,
  }));
  if (keys.length) {
    await connection.query(
      `ALTER TABLE runs ${keys.map((k) => `DROP KEY \`${k.name}\``).join(', ')}`,
    );
  }
  try {
    await load();
  } finally {
    if (keys.length) {
      const add = keys.map((k) => `ADD KEY \`${k.name}\` ${k.columns}`).join(', ');
      await connection.query(`ALTER TABLE runs ${add}`);
    }
  }
}

export async function analyzeRuns(connection: Connection): Promise<void> {
  await connection.query('ANALYZE TABLE runs');
}
