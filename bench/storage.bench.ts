import { Logger } from '@nestjs/common';
import { createConnection, type Connection } from 'mysql2/promise';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeModelServer } from '../test/fixtures/fake-model-server';
import { apiClient } from '../test/support/api-client';
import { createTestEnvironment, startTestApp, TestApp } from '../test/support/test-app';
import { RunContentRetentionSweeper } from '../src/modules/retention';
import { commandRuns } from './command-runs';
import { machineFacts } from './machine';
import { table } from './stats';

/**
 * `npm run bench:storage`: what a run leaves behind — the rows each table gains per run, the bytes
 * of their values, and what they take (data and indexes, as InnoDB allocated them), and the blob
 * store's bytes per run — for sizing the database and the blob store. STORAGE_RUNS runs (default
 * 1000), at most STORAGE_CONCURRENCY (100) at once, each shaped as `bench:density`'s (a turn
 * asking for one command, a turn that ends the run) with a prompt of STORAGE_PROMPT_BYTES (1000)
 * and a command printing STORAGE_OUTPUT_BYTES (2000), on the process backend, one api+worker
 * process, in a database of its own. Figures are the growth from after three warm-up runs to
 * after the runs, read once `ANALYZE TABLE` refreshed InnoDB's statistics. Allocated bytes count
 * pages (free space in them included, as on disk), which a table past 32 pages gets a megabyte at
 * a time: a 1 MB step over 1 000 runs is 1 KB per run, so read them as coarse. Values are counted as
 * MariaDB stores them (a string its length, an INT 4 bytes, a DATETIME(3) 7), without the row's own
 * header and the page's overhead. Then: what 2 000 runs a day keep for a year. Last, every run's
 * end is moved STORAGE_RETENTION_DAYS (90) + 1 days back and the content retention
 * (AMBIENT_RUN_CONTENT_RETENTION_DAYS) sweeps them: what each table keeps of a run after it, what
 * the sweep took per run, and a year with that retention.
 */

const RUNS = Number(process.env.STORAGE_RUNS ?? 1000);
const CONCURRENCY = Number(process.env.STORAGE_CONCURRENCY ?? 100);
const PROMPT_BYTES = Number(process.env.STORAGE_PROMPT_BYTES ?? 1000);
const OUTPUT_BYTES = Number(process.env.STORAGE_OUTPUT_BYTES ?? 2000);
const THINK_MS = Number(process.env.STORAGE_THINK_MS ?? 50);
const RETENTION_DAYS = Number(process.env.STORAGE_RETENTION_DAYS ?? 90);
const RUNS_A_DAY = 2000;
/** Tables whose rows of a run are deleted within days (an execution's key: a day after its end). */
const SHORT_LIVED = new Set(['api_keys']);
const WARM_UP_RUNS = 3;

interface TableSize {
  rows: number;
  /** The rows' column values' bytes summed (LENGTH of each): what they hold, without overhead. */
  valueBytes: number;
  dataBytes: number;
  indexBytes: number;
}

async function tableSizes(db: Connection, schema: string): Promise<Map<string, TableSize>> {
  const [tables] = (await db.query(
    `SELECT TABLE_NAME AS name FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_TYPE = 'BASE TABLE'`,
    [schema],
  )) as unknown as [{ name: string }[]];
  const sizes = new Map<string, TableSize>();
  for (const { name } of tables) {
    await db.query(`ANALYZE TABLE \`${name}\``);
    const [columns] = (await db.query(
      `SELECT COLUMN_NAME AS name, DATA_TYPE AS type, DATETIME_PRECISION AS precision_
         FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?`,
      [schema, name],
    )) as unknown as [{ name: string; type: string; precision_: number | null }[]];
    const lengths = columns.map((c) => `COALESCE(${valueBytes(c)}, 0)`).join(' + ');
    const [[count]] = (await db.query(
      `SELECT COUNT(*) AS n, COALESCE(SUM(${lengths}), 0) AS bytes FROM \`${name}\``,
    )) as unknown as [{ n: number | string; bytes: number | string }[]];
    const [[size]] = (await db.query(
      `SELECT DATA_LENGTH AS data, INDEX_LENGTH AS idx FROM information_schema.TABLES
        WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?`,
      [schema, name],
    )) as unknown as [{ data: number | string; idx: number | string }[]];
    sizes.set(name, {
      rows: Number(count.n),
      valueBytes: Number(count.bytes),
      dataBytes: Number(size.data),
      indexBytes: Number(size.idx),
    });
  }
  return sizes;
}

/** Bytes a fixed-size column's value takes in a row (MariaDB's storage requirements). */
const FIXED_BYTES: Record<string, number> = {
  tinyint: 1,
  smallint: 2,
  mediumint: 3,
  int: 4,
  bigint: 8,
  float: 4,
  double: 8,
  date: 3,
  year: 1,
};

/**
 * SQL for the bytes of a column's value in a row: a string's or a blob's own length, a number's or
 * a time's fixed size (a DATETIME(3) is 5 bytes and 2 of fraction), NULL for a NULL (a bit).
 */
function valueBytes(column: { name: string; type: string; precision_: number | null }): string {
  const id = `\`${column.name}\``;
  const fraction = Math.ceil((column.precision_ ?? 0) / 2);
  const fixed =
    FIXED_BYTES[column.type] ??
    (column.type === 'datetime' ? 5 + fraction : column.type === 'timestamp' ? 4 + fraction : null);
  // DECIMAL and the rest: their text's length, near enough for the few such columns.
  return fixed === null ? `LENGTH(${id})` : `IF(${id} IS NULL, NULL, ${fixed})`;
}

/** Bytes and files under a directory (the blob store's root), 0 when it does not exist. */
function treeBytes(dir: string): { bytes: number; files: number } {
  let bytes = 0;
  let files = 0;
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return { bytes, files };
  }
  for (const entry of entries) {
    const path = join(dir, entry);
    const stat = statSync(path);
    if (stat.isDirectory()) {
      const below = treeBytes(path);
      bytes += below.bytes;
      files += below.files;
    } else {
      bytes += stat.size;
      files += 1;
    }
  }
  return { bytes, files };
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(2)} KB`;
const gb = (bytes: number) => `${(bytes / 1024 ** 3).toFixed(2)} GB`;

async function main(): Promise<void> {
  Logger.overrideLogger(['warn', 'error']);
  const model = await startFakeModelServer();
  const env = createTestEnvironment('bench_storage', model.url);
  let app: TestApp | undefined;
  let opened: Connection | undefined;
  const blobRoot = join(env.workspaceRoot, '.blobs');
  const command = `head -c ${OUTPUT_BYTES} /dev/zero | tr '\\0' x`;
  const prompt = (script: string) =>
    `[script:${script}] ${'Describe the change and run the tests. '.repeat(Math.ceil(PROMPT_BYTES / 39)).slice(0, PROMPT_BYTES)}`;
  try {
    app = await startTestApp(env, ['api', 'worker'], {
      'sandbox.backend': 'process',
      'sandbox.readonlyPaths': '',
      'runs.workerConcurrency': CONCURRENCY,
      'runs.contentRetentionDays': RETENTION_DAYS,
    });
    const db = await createConnection(env.databaseUrl);
    opened = db;
    const api = apiClient(app.baseUrl, app.apiKey);
    const wave = async (name: string, count: number) => {
      const finalText = 'Done: the tests pass.';
      const order = { api, model, db, name, count, command, prompt, finalText };
      const ended = await commandRuns({ ...order, thinkMs: THINK_MS });
      if (ended.succeeded !== count) throw new Error(`${name}: not every run succeeded`);
    };
    await wave('warm', WARM_UP_RUNS);
    // Let the runs' trailing writes (key revocation) land before measuring.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const before = await tableSizes(db, env.database);
    const blobsBefore = treeBytes(blobRoot);
    const measuredFrom = new Date();
    for (let done = 0; done < RUNS; done += CONCURRENCY) {
      await wave(`run${done}`, Math.min(CONCURRENCY, RUNS - done));
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const after = await tableSizes(db, env.database);
    const blobsAfter = treeBytes(blobRoot);

    const rows: string[][] = [];
    let totalBytes = 0;
    let totalValues = 0;
    let shortLived = 0;
    for (const [name, size] of after) {
      const was = before.get(name) ?? { rows: 0, valueBytes: 0, dataBytes: 0, indexBytes: 0 };
      const added = size.rows - was.rows;
      const values = size.valueBytes - was.valueBytes;
      totalValues += values;
      const data = size.dataBytes - was.dataBytes;
      const index = size.indexBytes - was.indexBytes;
      if (added === 0 && data === 0 && index === 0) continue;
      totalBytes += data + index;
      if (SHORT_LIVED.has(name)) shortLived += data + index;
      rows.push([
        name,
        (added / RUNS).toFixed(2),
        kb(values / RUNS),
        kb(data / RUNS),
        kb(index / RUNS),
        kb((data + index) / RUNS),
      ]);
    }
    rows.sort((a, b) => parseFloat(b[5]) - parseFloat(a[5]));
    const blobBytes = blobsAfter.bytes - blobsBefore.bytes;
    const blobFiles = blobsAfter.files - blobsBefore.files;
    const perRun = totalBytes / RUNS;
    const keptPerRun = (totalBytes - shortLived) / RUNS;
    const blobPerRun = blobBytes / RUNS;
    process.stdout.write(
      [
        '',
        'Ambient storage benchmark',
        ...machineFacts(),
        `${RUNS} runs (after ${WARM_UP_RUNS} warm-up runs), at most ${CONCURRENCY} at once; each: a prompt of ${PROMPT_BYTES} bytes, a model turn asking for one command printing ${OUTPUT_BYTES} bytes, a turn that ends the run; process backend`,
        '',
        table([
          [
            'table',
            'rows per run',
            'values per run',
            'data per run (allocated)',
            'indexes per run (allocated)',
            'allocated per run',
          ],
          ...rows,
        ]),
        '',
        `database: ${kb(perRun)} per run allocated (data and indexes), holding ${kb(totalValues / RUNS)} of values`,
        `blob store: ${kb(blobPerRun)} per run in ${(blobFiles / RUNS).toFixed(2)} files (artifacts, vendor CLIs' raw transcripts)`,
        `${RUNS_A_DAY} runs a day keep, after a year: database ${gb(keptPerRun * RUNS_A_DAY * 365)} (${[...SHORT_LIVED].join(', ')} left out: deleted within days), blob store ${gb(blobPerRun * RUNS_A_DAY * 365)}`,
        '',
      ].join('\n'),
    );
    process.stdout.write(
      await afterRetention(app, db, env.database, measuredFrom, { before, whole: after }),
    );
  } finally {
    await opened?.end();
    await app?.close();
    await env.destroy();
    await model.close();
  }
}

/**
 * Every measured run's end moved past the retention, one sweep, and what each table keeps of a run then:
 * rows and values (allocated pages are not given back, InnoDB reuses them), the sweep's wall
 * time per run, and a year at RUNS_A_DAY with RETENTION_DAYS of content kept whole.
 */
async function afterRetention(
  app: Awaited<ReturnType<typeof startTestApp>>,
  db: Connection,
  schema: string,
  measuredFrom: Date,
  { before, whole }: { before: Map<string, TableSize>; whole: Map<string, TableSize> },
): Promise<string> {
  // The measured runs only: the warm-up runs are in `before`.
  await db.query(
    'UPDATE runs SET finished_at = finished_at - INTERVAL ? DAY WHERE created_at >= ?',
    [RETENTION_DAYS + 1, measuredFrom],
  );
  const sweeper = app.ambient.app.get(RunContentRetentionSweeper, { strict: false });
  const started = performance.now();
  const swept = await sweeper.sweep();
  const sweepMs = performance.now() - started;
  const left = await tableSizes(db, schema);
  const rows: string[][] = [];
  let recordAllocated = 0;
  let valuesLeft = 0;
  for (const [name, size] of whole) {
    const was = before.get(name) ?? { rows: 0, valueBytes: 0, dataBytes: 0, indexBytes: 0 };
    const now = left.get(name) ?? size;
    const rowsWhole = (size.rows - was.rows) / RUNS;
    const rowsLeft = (now.rows - was.rows) / RUNS;
    if (rowsWhole === 0 || SHORT_LIVED.has(name)) continue;
    valuesLeft += Math.max(0, now.valueBytes - was.valueBytes);
    if (rowsLeft >= rowsWhole) {
      recordAllocated += size.dataBytes + size.indexBytes - was.dataBytes - was.indexBytes;
    }
    rows.push([
      name,
      `${rowsWhole.toFixed(2)} → ${rowsLeft.toFixed(2)}`,
      `${kb((size.valueBytes - was.valueBytes) / RUNS)} → ${kb((now.valueBytes - was.valueBytes) / RUNS)}`,
    ]);
  }
  const wholePerRun =
    [...whole].reduce((sum, [name, size]) => {
      const was = before.get(name) ?? { rows: 0, valueBytes: 0, dataBytes: 0, indexBytes: 0 };
      if (SHORT_LIVED.has(name)) return sum;
      return sum + size.dataBytes + size.indexBytes - was.dataBytes - was.indexBytes;
    }, 0) / RUNS;
  const recordPerRun = recordAllocated / RUNS;
  const year =
    (Math.min(RETENTION_DAYS, 365) * wholePerRun +
      Math.max(0, 365 - RETENTION_DAYS) * recordPerRun) *
    RUNS_A_DAY;
  return [
    `content retention (AMBIENT_RUN_CONTENT_RETENTION_DAYS=${RETENTION_DAYS}): one sweep deleted the content of ${swept} runs in ${(sweepMs / 1000).toFixed(2)} s (${(sweepMs / Math.max(1, swept)).toFixed(2)} ms per run)`,
    '',
    table([['table', 'rows per run: whole → after', 'values per run: whole → after'], ...rows]),
    '',
    `after the retention a run keeps ${kb(valuesLeft / RUNS)} of values, in the tables it did not touch ${kb(recordPerRun)} allocated`,
    `${RUNS_A_DAY} runs a day keep, after a year with ${RETENTION_DAYS} days of content: database ${gb(year)}`,
    '',
  ].join('\n');
}

main().then(
  () => process.exit(0),
  (err: Error) => {
    process.stderr.write(`storage bench failed: ${err.stack ?? err.message}\n`);
    process.exit(1);
  },
);
