import { createConnection, type Connection } from 'mysql2/promise';
import { encodeRunCursor } from '../src/modules/runs/run-list.cursor';
import { parseRunListParams } from '../src/modules/runs/run-list.params';
import type { FakeModelServer } from '../test/fixtures/fake-model-server';
import { createTestEnvironment, startTestApp, TestApp } from '../test/support/test-app';
import { runLoad, walkPages } from './load-generator';
import { analyzeRuns, findSeedOwner, SeedOwner, seedRuns, withDeferredIndexes } from './seed-runs';
import { captureQueries, explain, PlanRow } from './sql-capture';

export const SMALL_TEAM_RUNS = 10_000;
export const LARGE_TEAM_RUNS = 1_000_000;
export const CREATED_AFTER_DAYS = 30;
/** Where the deep keyset pages start: this many days back, near the end of the window. */
export const DEEP_CURSOR_DAYS = 25;
const SEED_CONNECTIONS = 2;
const WARMUP_REQUESTS = 30;
const MEASURED_REQUESTS = 200;
const WALK_PAGES = 6;
const WALKS = 15;
const DEEP_PAGES = 3;
const DEEP_WALKS = 10;
const DAY_MS = 86_400_000;

export interface ListFigures {
  teamRuns: number;
  /** First page, the same request repeated. */
  firstPageMs: number[];
  /** Pages 2 … WALK_PAGES, reached through next_cursor. */
  keysetPageMs: number[];
  /** Pages from a cursor DEEP_CURSOR_DAYS back (thousands of matching rows before it). */
  deepPageMs: number[];
  rowsPerWalk: number;
  walksComplete: boolean;
}

export interface ListResult {
  small: ListFigures;
  large: ListFigures;
  seedSmallMs: number;
  seedLargeMs: number;
  seedLargeInsertMs: number;
  analyzeMs: number;
  /** Plans of the API's own SQL at LARGE_TEAM_RUNS: the first page and a deep keyset page. */
  firstPagePlan: PlanRow[];
  deepPagePlan: PlanRow[];
  deepPageSql: string;
  query: string;
}

function listUrl(app: TestApp, createdAfter: Date): string {
  const params = new URLSearchParams([
    ['limit', '50'],
    ['state', 'SUCCEEDED'],
    ['state', 'FAILED'],
    ['created_after', createdAfter.toISOString()],
    ['sort_by', 'created_at'],
  ]);
  return `${app.baseUrl}/agent/runs?${params.toString()}`;
}

/**
 * The list URL with a cursor as the API would have issued it after the newest matching run
 * created DEEP_CURSOR_DAYS ago or earlier.
 */
async function deepCursorUrl(app: TestApp, url: string, teamId: string): Promise<string> {
  const query = new URL(url).searchParams;
  const raw = { ...Object.fromEntries(query), state: query.getAll('state') };
  const params = parseRunListParams(raw, { metadataFilterEnabled: true });
  const before = new Date(Date.now() - DEEP_CURSOR_DAYS * DAY_MS);
  const [row] = (await app.dataSource.query(
    `SELECT id, created_at FROM runs WHERE team_id = ? AND state IN (?) AND created_at <= ?
      ORDER BY created_at DESC, id DESC LIMIT 1`,
    [teamId, params.states, before],
  )) as { id: string; created_at: Date }[];
  const deep = new URL(url);
  deep.searchParams.set('cursor', encodeRunCursor(params, { value: row.created_at, id: row.id }));
  return deep.toString();
}

async function measureList(
  app: TestApp,
  url: string,
  teamId: string,
  teamRuns: number,
): Promise<ListFigures> {
  const spec = {
    url,
    method: 'GET' as const,
    headers: { authorization: `Bearer ${app.apiKey}` },
  };
  await runLoad({ ...spec, concurrency: 1, requests: WARMUP_REQUESTS });
  const first = await runLoad({ ...spec, concurrency: 1, requests: MEASURED_REQUESTS });
  if (first.errors) throw new Error(`list failed: ${first.firstError}`);
  const walk = await walkPages({ ...spec, pages: WALK_PAGES, walks: WALKS });
  const deepUrl = await deepCursorUrl(app, url, teamId);
  const deep = await walkPages({ ...spec, url: deepUrl, pages: DEEP_PAGES, walks: DEEP_WALKS });
  return {
    teamRuns,
    firstPageMs: first.latenciesMs,
    keysetPageMs: walk.latenciesMs.slice(1).flat(),
    deepPageMs: deep.latenciesMs.flat(),
    rowsPerWalk: walk.rowsSeen / WALKS,
    walksComplete: walk.complete && deep.complete,
  };
}

async function timed(action: () => Promise<void>): Promise<number> {
  const start = performance.now();
  await action();
  return performance.now() - start;
}

/** Plans of the list query's SQL, as the API sent it, for the first page and a deep page. */
async function capturePlans(app: TestApp, url: string, teamId: string) {
  const isListQuery = (sql: string) => /\bFROM `?runs`? /.test(sql) && /\bORDER BY\b/.test(sql);
  const headers = { authorization: `Bearer ${app.apiKey}` };
  const deepUrl = await deepCursorUrl(app, url, teamId);
  const listSql = async (target: string) =>
    (
      await captureQueries(app.dataSource, () => fetch(target, { headers }).then((r) => r.text()))
    ).find((q) => isListQuery(q.sql));
  const first = await listSql(url);
  const deep = await listSql(deepUrl);
  if (!first || !deep) throw new Error('could not capture the list query');
  return {
    firstPagePlan: await explain(app.dataSource, first),
    deepPagePlan: await explain(app.dataSource, deep),
    deepPageSql: deep.sql,
  };
}

async function seedLarge(connections: Connection[], owner: SeedOwner, now: Date) {
  let insertMs = 0;
  const totalMs = await timed(() =>
    withDeferredIndexes(connections[0], async () => {
      insertMs = await timed(() =>
        seedRuns(connections, owner, {
          firstRow: SMALL_TEAM_RUNS,
          count: LARGE_TEAM_RUNS - SMALL_TEAM_RUNS,
          now,
        }),
      );
    }),
  );
  return { totalMs, insertMs };
}

/**
 * GET /agent/runs with a team of SMALL_TEAM_RUNS runs, then of LARGE_TEAM_RUNS (seeded in SQL,
 * spread over a year), API role only. The filter keeps the last CREATED_AFTER_DAYS days.
 */
export async function runListPhase(
  model: FakeModelServer,
  onProgress: (message: string) => void,
): Promise<ListResult> {
  const env = createTestEnvironment('bench_list', model.url);
  let app: TestApp | undefined;
  const connections: Connection[] = [];
  try {
    app = await startTestApp(env, ['api']);
    for (let i = 0; i < SEED_CONNECTIONS; i++) {
      connections.push(await createConnection(env.databaseUrl));
    }
    const owner = await findSeedOwner(connections[0]);
    const now = new Date();
    const url = listUrl(app, new Date(now.getTime() - CREATED_AFTER_DAYS * DAY_MS));

    const seedSmallMs = await timed(async () => {
      await seedRuns(connections, owner, { firstRow: 0, count: SMALL_TEAM_RUNS, now });
      await analyzeRuns(connections[0]);
    });
    const small = await measureList(app, url, owner.teamId, SMALL_TEAM_RUNS);
    onProgress(`list at ${SMALL_TEAM_RUNS} runs measured; seeding ${LARGE_TEAM_RUNS} runs`);

    const seeded = await seedLarge(connections, owner, now);
    const analyzeMs = await timed(() => analyzeRuns(connections[0]));
    onProgress(`seeded in ${(seeded.totalMs / 1000).toFixed(1)} s; measuring the list`);
    const large = await measureList(app, url, owner.teamId, LARGE_TEAM_RUNS);
    return {
      small,
      large,
      seedSmallMs,
      seedLargeMs: seeded.totalMs,
      seedLargeInsertMs: seeded.insertMs,
      analyzeMs,
      ...(await capturePlans(app, url, owner.teamId)),
      query: decodeURIComponent(url.slice(url.indexOf('/agent/runs'))),
    };
  } finally {
    for (const connection of connections) await connection.end();
    await app?.close();
    await env.destroy();
  }
}
