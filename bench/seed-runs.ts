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
    'SELECT team_id AS teamId, user_id AS userId FROM api_keys WHERE revoked_at IS NULL LIMIT 1',
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
 * Random-looking but deterministic per row number `n` (and the seed salt): ids are UUID-shaped,
 * like the UUIDv4 the API creates, so rows land all over the primary key as in production.
 */
function uuidFrom(expr: string): string {
  const h = `MD5(${expr})`;
  return (
    `CONCAT(SUBSTR(${h},1,8),'-',SUBSTR(${h},9,4),'-4',SUBSTR(${h},14,3),'-a',` +
    `SUBSTR(${h},18,3),'-',SUBSTR(${h},21,12))`
  );
}

/** A pseudo-random integer in [0, modulo) derived from the row number. */
function hashMod(n: string, salt: string, modulo: number): string {
  return `MOD(CONV(SUBSTR(MD5(CONCAT('${salt}', ${n})), 1, 12), 16, 10), ${modulo})`;
}

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
const SOURCES = ['API', 'API', 'SLACK', 'LINEAR', 'SCHEDULED_AGENT', 'GITHUB_ACTION', 'CLI', 'WEB_APP'];
const SKILLS = ['acme/deploy-helper', 'acme/test-fixer', 'acme/triage'];

const quoted = (values: string[]): string => values.map((v) => `'${v.replace(/'/g, "''")}'`).join(',');

function insertSql(owner: SeedOwner, salt: string): string {
  const id = uuidFrom(`CONCAT('${salt}', s.n)`);
  const skill = `CASE WHEN s.p % 5 = 0 THEN ELT(1 + s.p % 3, ${quoted(SKILLS)}) END`;
  return `INSERT INTO runs (id, team_id, creator_id, executor_id, title, prompt, state, source,
      execution_location, mode, config, config_name, model_id, environment_id, skill_spec,
      parent_run_id, root_run_id, depth, conversation_id, status_message, request_usage,
      interactive, execution_count, attempt, started_at, finished_at, created_at, updated_at)
    SELECT ${id}, '${owner.teamId}', '${owner.userId}', '${owner.userId}',
      LEFT(ELT(1 + s.p % ${PROMPTS.length}, ${quoted(PROMPTS)}), 80),
      ELT(1 + s.p % ${PROMPTS.length}, ${quoted(PROMPTS)}),
      ${STATE_SQL}, ELT(1 + s.p % ${SOURCES.length}, ${quoted(SOURCES)}),
      'REMOTE', 'normal',
      JSON_OBJECT('model_id', 'fake-model', 'skill_spec', ${skill}),
      NULL, 'fake-model', NULL, ${skill},
      NULL, ${id}, 0, ${uuidFrom(`CONCAT('c${salt}', s.n)`)},
      JSON_OBJECT('message', 'Done.'),
      JSON_OBJECT('total_tokens', 100 + s.p * 37, 'inference_cost_usd', s.p / 1000),
      0, 1, 1,
      s.created + INTERVAL (20 + s.p * 7) * 1000 MICROSECOND,
      s.created + INTERVAL (30 + s.p * 6) SECOND,
      s.created,
      s.created + INTERVAL (30 + s.p * 6) SECOND
    FROM (
      SELECT d.n,
        ${hashMod('d.n', `p${salt}`, 100)} AS p,
        ? - INTERVAL ${hashMod('d.n', `t${salt}`, YEAR_MS)} * 1000 MICROSECOND AS created
      FROM (SELECT ? + a.n * 1000 + b.n AS n FROM ${DIGITS_TABLE} a CROSS JOIN ${DIGITS_TABLE} b
            WHERE a.n < ?) d
      WHERE d.n < ?
    ) s`;
}

/**
 * Inserts `count` finished runs of the owner's team, created uniformly over the year before
 * `now`, with bulk INSERT … SELECT statements. `salt` keeps separate seeds from colliding.
 */
export async function seedRuns(
  connection: Connection,
  owner: SeedOwner,
  count: number,
  opts: { now: Date; salt: string },
): Promise<void> {
  await ensureDigits(connection);
  const sql = insertSql(owner, opts.salt);
  const anchor = opts.now.toISOString().replace('T', ' ').replace('Z', '');
  for (let start = 0; start < count; start += CHUNK_ROWS) {
    const rows = Math.min(CHUNK_ROWS, count - start);
    // Rows start … start + rows - 1: whole thousands from the digits table, cut at the end.
    await connection.query(sql, [anchor, start, Math.ceil(rows / 1000), start + rows]);
  }
}

export async function analyzeRuns(connection: Connection): Promise<void> {
  await connection.query('ANALYZE TABLE runs');
}
