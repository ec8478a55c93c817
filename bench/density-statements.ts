import { Logger } from '@nestjs/common';
import { createConnection, type Connection } from 'mysql2/promise';
import { dirname, join } from 'node:path';
import { startFakeModelServer } from '../test/fixtures/fake-model-server';
import { commandRuns } from './command-runs';
import { apiClient } from '../test/support/api-client';
import { createTestEnvironment, startTestApp, TestApp } from '../test/support/test-app';

/**
 * `node -r @swc-node/register bench/density-statements.ts`: the SQL statements an execution sends,
 * counted at mysql2 (TypeORM's and the raw pool's alike) over a burst of DENSITY_RUNS (default 20)
 * runs shaped as `bench:density`'s (a turn asking for `echo hi`, a turn that ends the run), on
 * DENSITY_BACKENDS' first backend (default `process`), one api+worker process. The burst is
 * followed from a connection of its own, not counted. Prints statements per run by kind.
 */

const RUNS = Number(process.env.DENSITY_RUNS ?? 20);
const BACKEND = (process.env.DENSITY_BACKENDS ?? 'process').split(',')[0];
const THINK_MS = Number(process.env.DENSITY_THINK_MS ?? 200);

// mysql2 exports no subpath: its base connection's file, found from the package's main file.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const BaseConnection = require(
  join(dirname(require.resolve('mysql2')), 'lib/base/connection.js'),
) as {
  prototype: { query: (...args: unknown[]) => unknown };
};

const counted: string[] = [];
let counting = false;
const uncounted = new WeakSet<object>();
const originalQuery = BaseConnection.prototype.query;
BaseConnection.prototype.query = function (this: object, ...args: unknown[]) {
  if (counting && !uncounted.has(this)) {
    const sql = typeof args[0] === 'string' ? args[0] : (args[0] as { sql: string }).sql;
    counted.push(sql);
  }
  return originalQuery.apply(this, args);
};

/** A statement's kind: its first words, literals and placeholders dropped. */
function kindOf(sql: string): string {
  const flat = sql.replace(/\s+/g, ' ').trim();
  return flat.replace(/'[^']*'/g, "'…'").slice(0, 110);
}

async function main(): Promise<void> {
  Logger.overrideLogger(['warn', 'error']);
  const model = await startFakeModelServer();
  const env = createTestEnvironment(`bench_statements_${BACKEND}`, model.url);
  let app: TestApp | undefined;
  let follower: Connection | undefined;
  try {
    app = await startTestApp(env, ['api', 'worker'], {
      'sandbox.backend': BACKEND,
      'sandbox.readonlyPaths': '',
      'runs.workerConcurrency': RUNS,
    });
    const db = await createConnection(env.databaseUrl);
    follower = db;
    uncounted.add((db as unknown as { connection: object }).connection);
    const api = apiClient(app.baseUrl, app.apiKey);
    const burst = (name: string, count: number) =>
      commandRuns({ api, model, db, name, count, thinkMs: THINK_MS, command: 'echo hi' });
    await burst('warm', 3);
    // Let the warm-up's trailing work (follow-up checks, hints) pass before counting.
    await new Promise((resolve) => setTimeout(resolve, 500));
    counting = true;
    await burst('counted', RUNS);
    await new Promise((resolve) => setTimeout(resolve, 500));
    counting = false;
    const byKind = new Map<string, number>();
    for (const sql of counted) byKind.set(kindOf(sql), (byKind.get(kindOf(sql)) ?? 0) + 1);
    const lines = [...byKind]
      .sort((a, b) => b[1] - a[1])
      .map(([kind, n]) => `${(n / RUNS).toFixed(2).padStart(6)}  ${kind}`);
    process.stdout.write(
      [
        `${BACKEND}: ${RUNS} runs, ${counted.length} statements, ${(counted.length / RUNS).toFixed(1)} per run`,
        ...lines,
        '',
      ].join('\n'),
    );
  } finally {
    await follower?.end();
    await app?.close();
    await env.destroy();
    await model.close();
  }
}

main().then(
  () => process.exit(0),
  (err: Error) => {
    process.stderr.write(`density-statements failed: ${err.stack ?? err.message}\n`);
    process.exit(1);
  },
);
