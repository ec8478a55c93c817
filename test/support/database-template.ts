import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Connection, createConnection } from 'mysql2/promise';
import { prepareDatabase } from '../../src/bootstrap/preflight';
import { loadConfig } from '../../src/config/app-config';

/**
 * A fresh test database as a copy of a migrated template.
 *
 * The e2e suite starts hundreds of apps, each on a database of its own; applying every migration
 * to each took ≈ 5 s on an idle machine and 13 s at load 18, where app start-up then exceeded
 * hooks' timeouts. The first database a test run needs migrates a template once, through the
 * product's own path (create, migrate under the lock), keyed by the migrations' checksums; every
 * other database copies the template's tables: the statements MySQL gives back (`SHOW CREATE
 * TABLE`: columns, indexes, foreign keys, collations) and their rows (the migrations table). The
 * migrations themselves keep a test of their own that applies them from nothing
 * (test/schema-drift.e2e-spec.ts, test/database-template.e2e-spec.ts).
 */

const REPO_ROOT = join(__dirname, '..', '..');
/** Marks a template whose migrations all ran; never copied. */
const READY_TABLE = 'template_ready';
/** Only one process builds a template at a time; the others wait, then copy it. */
const BUILD_LOCK = 'ambient_test_template_build';
const BUILD_LOCK_SECONDS = 300;

/** The template's name: changes whenever a migration is added or changed. */
export function templateDatabaseName(): string {
  const hash = createHash('sha256')
    .update(readFileSync(join(REPO_ROOT, 'migrations', 'checksums.json')))
    .update(readFileSync(join(REPO_ROOT, 'migrations', 'index.ts')))
    .digest('hex')
    .slice(0, 12);
  return `amb_template_${hash}`;
}

const quoted = (name: string) => `\`${name.replace(/`/g, '``')}\``;

async function exists(connection: Connection, database: string, table?: string): Promise<boolean> {
  const [rows] = table
    ? await connection.query(
        `SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?`,
        [database, table],
      )
    : await connection.query(`SELECT 1 FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?`, [
        database,
      ]);
  return (rows as unknown[]).length > 0;
}

/** Migrates the template unless a finished one is there; under a lock across processes. */
async function ensureTemplate(
  connection: Connection,
  serverUrl: string,
  template: string,
  secretsKey: string,
) {
  if (await exists(connection, template, READY_TABLE)) return;
  const [[{ locked }]] = (await connection.query(`SELECT GET_LOCK(?, ?) AS locked`, [
    BUILD_LOCK,
    BUILD_LOCK_SECONDS,
  ])) as unknown as [{ locked: number }[]];
  if (Number(locked) !== 1) throw new Error(`timed out waiting for ${BUILD_LOCK}`);
  try {
    if (await exists(connection, template, READY_TABLE)) return;
    // A build that died half-way left an unfinished template: start it again.
    await connection.query(`DROP DATABASE IF EXISTS ${quoted(template)}`);
    const config = loadConfig(
      { AMBIENT_CONFIG_FILE: join(REPO_ROOT, 'config', 'default.yaml') },
      { 'database.url': `${serverUrl}/${template}`, secretsKey },
    );
    await prepareDatabase(config);
    await connection.query(`CREATE TABLE ${quoted(template)}.${READY_TABLE} (id INT)`);
  } finally {
    await connection.query(`SELECT RELEASE_LOCK(?)`, [BUILD_LOCK]);
  }
}

/** Copies the template's tables and rows into `database`, which must not exist yet. */
async function copyTemplate(connection: Connection, template: string, database: string) {
  const [tables] = (await connection.query(
    `SELECT TABLE_NAME AS name FROM information_schema.TABLES
      WHERE TABLE_SCHEMA = ? AND TABLE_TYPE = 'BASE TABLE' AND TABLE_NAME <> ?`,
    [template, READY_TABLE],
  )) as unknown as [{ name: string }[]];
  await connection.query(
    `CREATE DATABASE ${quoted(database)} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`,
  );
  // Foreign keys name their tables without a schema: the statements run inside the new database.
  await connection.query(`USE ${quoted(database)}`);
  await connection.query('SET FOREIGN_KEY_CHECKS = 0');
  for (const { name } of tables) {
    const [[row]] = (await connection.query(
      `SHOW CREATE TABLE ${quoted(template)}.${quoted(name)}`,
    )) as unknown as [Record<string, string>[]];
    await connection.query(row['Create Table']);
  }
  const [filled] = (await connection.query(
    tables
      .map(
        ({ name }) =>
          `SELECT ${connection.escape(name)} AS name FROM ${quoted(template)}.${quoted(name)} HAVING COUNT(*) > 0`,
      )
      .join(' UNION ALL '),
  )) as unknown as [{ name: string }[]];
  for (const { name } of filled) {
    await connection.query(
      `INSERT INTO ${quoted(name)} SELECT * FROM ${quoted(template)}.${quoted(name)}`,
    );
  }
  await connection.query('SET FOREIGN_KEY_CHECKS = 1');
}

/**
 * Creates `database` on the server of `serverUrl` (mysql://user@host:port, no database) as a
 * migrated copy of the template (migrated with `secretsKey`, the AMBIENT_SECRETS_KEY of the test
 * processes); does nothing when it exists already (an app started again).
 */
export async function createMigratedDatabase(
  serverUrl: string,
  database: string,
  secretsKey: string,
): Promise<void> {
  const connection = await createConnection(serverUrl);
  try {
    if (await exists(connection, database)) return;
    const template = templateDatabaseName();
    await ensureTemplate(connection, serverUrl, template, secretsKey);
    try {
      await copyTemplate(connection, template, database);
    } catch (err) {
      // Half a copy would pass for a migrated database next time: leave none.
      await connection.query(`DROP DATABASE IF EXISTS ${quoted(database)}`);
      throw err;
    }
  } finally {
    await connection.end();
  }
}
