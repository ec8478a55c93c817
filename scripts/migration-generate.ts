// Writes the next migration from the entities: what TypeORM's schema builder would change in a
// database migrated to the latest (a scratch one on DATABASE_URL's server, dropped afterwards).
//   npm run migration:generate -- <kebab-case-name> [--timestamp <13 digits>]
// docs/development-database.md tells the whole workflow.
// The composition root: loading it registers every entity the app maps (TypeORM's metadata).
import '../src/app.module';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { format, resolveConfig } from 'prettier';
import { createConnection } from 'mysql2/promise';
import { DataSource } from 'typeorm';
import { prepareDatabase } from '../src/bootstrap/preflight';
import { AppConfig, loadConfig } from '../src/config/app-config';
import { parseDatabaseUrl } from '../src/database/database-url';
import { loadedEntities } from '../src/database/database.module';
import { comparingDataSource, schemaDrift, SchemaDrift } from '../src/database/schema-drift';
import { MIGRATION_FILE, migrationFiles, MIGRATIONS_DIR } from './migration-checksums';

const INDEX_FILE = join(MIGRATIONS_DIR, 'index.ts');

interface Request {
  name: string;
  timestamp: string;
}

function request(): Request {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: { timestamp: { type: 'string' } },
  });
  const [name] = positionals;
  if (positionals.length !== 1 || !/^[a-z][a-z0-9]*(-[a-z0-9]+)*$/.test(name)) {
    throw new Error(
      'usage: npm run migration:generate -- <kebab-case-name> [--timestamp <13 digits>]',
    );
  }
  const timestamp = values.timestamp ?? String(Date.now());
  const newest = migrationFiles().at(-1);
  const newestTimestamp = newest ? MIGRATION_FILE.exec(newest)![1] : '0';
  if (!/^\d{13}$/.test(timestamp) || timestamp <= newestTimestamp) {
    throw new Error(
      `--timestamp: 13 digits after the newest migration's ${newestTimestamp} (got ${timestamp})`,
    );
  }
  return { name, timestamp };
}

const pascal = (name: string) =>
  name.replace(/(^|-)([a-z0-9])/g, (_, _dash: string, c: string) => c.toUpperCase());

/** A statement as a line of the migration: its SQL as a string literal, and its parameters. */
function call({ query, parameters }: SchemaDrift['up'][number]): string {
  const args = [JSON.stringify(query), ...(parameters?.length ? [JSON.stringify(parameters)] : [])];
  return `    await q.query(${args.join(', ')});`;
}

function migrationSource(className: string, drift: SchemaDrift): string {
  return [
    `import { MigrationInterface, QueryRunner } from 'typeorm';`,
    ``,
    `/**`,
    ` * TODO: what this changes and why, for the operator who reads it before upgrading.`,
    ` * (Generated from the entities by npm run migration:generate; review every statement.)`,
    ` */`,
    `export class ${className} implements MigrationInterface {`,
    `  name = '${className}';`,
    ``,
    `  async up(q: QueryRunner): Promise<void> {`,
    ...drift.up.map(call),
    `  }`,
    ``,
    `  async down(q: QueryRunner): Promise<void> {`,
    ...drift.down.map(call),
    `  }`,
    `}`,
    ``,
  ].join('\n');
}

/** migrations/index.ts with the migration imported and appended to MIGRATIONS. */
function withMigrationListed(index: string, className: string, module: string): string {
  const lines = index.split('\n');
  const lastImport = lines.map((line) => /from '\.\/\d{13}-/.test(line)).lastIndexOf(true);
  lines.splice(lastImport + 1, 0, `import { ${className} } from './${module}';`);
  const start = lines.findIndex((line) => line.startsWith('export const MIGRATIONS = ['));
  const end = lines.findIndex((line, i) => i > start && line === '];');
  if (lastImport < 0 || start < 0 || end < 0) {
    throw new Error(`${INDEX_FILE}: cannot find the migration imports and MIGRATIONS`);
  }
  lines.splice(end, 0, `  ${className},`);
  return lines.join('\n');
}

async function writeFormatted(path: string, source: string): Promise<void> {
  const options = (await resolveConfig(path)) ?? {};
  writeFileSync(path, await format(source, { ...options, filepath: path }));
}

/** DATABASE_URL with a scratch database of its own, so the developer's database is not touched. */
function scratchUrl(url: string): string {
  const scratch = new URL(url);
  scratch.pathname = `/ambient_generate_${process.pid}_${Date.now().toString(36)}`;
  return scratch.toString();
}

async function dropDatabase(config: AppConfig): Promise<void> {
  const { database, ...server } = parseDatabaseUrl(config.database.url);
  const connection = await createConnection(server);
  try {
    await connection.query(`DROP DATABASE IF EXISTS \`${database}\``);
  } finally {
    await connection.end();
  }
}

async function main(): Promise<void> {
  const { name, timestamp } = request();
  const config = loadConfig(process.env);
  const scratch = loadConfig(process.env, { 'database.url': scratchUrl(config.database.url) });
  let dataSource: DataSource | undefined;
  try {
    await prepareDatabase(scratch);
    dataSource = await comparingDataSource(scratch, loadedEntities());
    const drift = await schemaDrift(dataSource);
    for (const problem of drift.differences) {
      console.warn(`not generated (the schema builder does not compare it): ${problem}`);
    }
    if (!drift.up.length) {
      console.log('the entities and the migrations agree: nothing to generate');
      return;
    }
    const className = `${pascal(name)}${timestamp}`;
    const module = `${timestamp}-${name}`;
    await writeFormatted(join(MIGRATIONS_DIR, `${module}.ts`), migrationSource(className, drift));
    await writeFormatted(
      INDEX_FILE,
      withMigrationListed(readFileSync(INDEX_FILE, 'utf8'), className, module),
    );
    console.log(
      `wrote migrations/${module}.ts (${drift.up.length} statement(s)) and listed it in migrations/index.ts`,
    );
    console.log(
      'next: say what it changes and why in its doc comment, review each statement, run test/schema-drift.e2e-spec.ts, then npm run migration:checksums',
    );
  } finally {
    await dataSource?.destroy();
    await dropDatabase(scratch);
  }
}

main().catch((err: unknown) => {
  console.error(`migration:generate: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});
