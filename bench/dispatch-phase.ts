import type { DataSource } from 'typeorm';
import type { FakeModelServer } from '../test/fixtures/fake-model-server';
import { createTestEnvironment, startTestApp, TestApp } from '../test/support/test-app';
import { runLoad } from './load-generator';

export const DISPATCH_RUNS = 300;
export const DISPATCH_RATE_PER_SECOND = 25;
const WARMUP_RUNS = 20;
const FINISH_TIMEOUT_MS = 60_000;
/** The default config's timings, not the test environment's fast ones: dispatch as deployed. */
const PRODUCTION_TIMINGS = {
  'runs.dispatchSweepIntervalMs': 5000,
  'runs.dispatchGraceMs': 5000,
  'runs.leaseMs': 30000,
  'runs.workerConcurrency': 4,
};

export interface DispatchResult {
  /** created_at → started_at (QUEUED → INPROGRESS) per run, ms. */
  dispatchMs: number[];
  /** created_at → the oz_run_claimed event (QUEUED → CLAIMED) per run, ms. */
  claimMs: number[];
  /** POST /agent/runs latency at this rate, ms. */
  httpMs: number[];
  states: Record<string, number>;
  settings: string;
}

interface TimingRow {
  dispatch_ms: string | null;
  claim_ms: string | null;
  state: string;
}

async function createRuns(app: TestApp, prompt: string, count: number): Promise<number[]> {
  const result = await runLoad({
    url: `${app.baseUrl}/agent/runs`,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${app.apiKey}` },
    body: JSON.stringify({ prompt }),
    concurrency: 8,
    requests: count,
    ratePerSecond: DISPATCH_RATE_PER_SECOND,
  });
  if (result.errors) throw new Error(`run creation failed: ${result.firstError}`);
  return result.latenciesMs;
}

async function waitUntilFinished(dataSource: DataSource, prompt: string, count: number) {
  const deadline = Date.now() + FINISH_TIMEOUT_MS;
  for (;;) {
    const [row] = (await dataSource.query(
      'SELECT COUNT(*) AS c FROM runs WHERE prompt = ? AND finished_at IS NOT NULL',
      [prompt],
    )) as { c: string }[];
    if (Number(row.c) >= count) return;
    if (Date.now() > deadline) throw new Error(`only ${row.c} of ${count} runs finished in time`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function timings(dataSource: DataSource, prompt: string): Promise<TimingRow[]> {
  return (await dataSource.query(
    `SELECT TIMESTAMPDIFF(MICROSECOND, r.created_at, r.started_at) / 1000 AS dispatch_ms,
            TIMESTAMPDIFF(MICROSECOND, r.created_at,
              (SELECT MIN(e.occurred_at) FROM run_events e
                WHERE e.run_id = r.id AND e.event_type = 'oz_run_claimed')) / 1000 AS claim_ms,
            r.state
       FROM runs r WHERE r.prompt = ?`,
    [prompt],
  )) as TimingRow[];
}

/**
 * API and worker roles in one process, an instantly answering model, runs created at a steady
 * rate well below the workers' capacity, so the figure is dispatch (commit, Bull, claim, start)
 * rather than time spent waiting behind other runs.
 */
export async function runDispatchPhase(model: FakeModelServer): Promise<DispatchResult> {
  const env = createTestEnvironment('bench_dispatch', model.url);
  let app: TestApp | undefined;
  try {
    app = await startTestApp(env, ['api', 'worker'], PRODUCTION_TIMINGS);
    const warmup = 'Warm-up run: reply briefly';
    await createRuns(app, warmup, WARMUP_RUNS);
    await waitUntilFinished(app.dataSource, warmup, WARMUP_RUNS);

    const prompt = 'Measured run: reply briefly';
    const httpMs = await createRuns(app, prompt, DISPATCH_RUNS);
    await waitUntilFinished(app.dataSource, prompt, DISPATCH_RUNS);
    const rows = await timings(app.dataSource, prompt);
    const states: Record<string, number> = {};
    for (const row of rows) states[row.state] = (states[row.state] ?? 0) + 1;
    return {
      dispatchMs: rows.filter((r) => r.dispatch_ms !== null).map((r) => Number(r.dispatch_ms)),
      claimMs: rows.filter((r) => r.claim_ms !== null).map((r) => Number(r.claim_ms)),
      httpMs,
      states,
      settings:
        `api + worker roles in one process, worker concurrency ` +
        `${PRODUCTION_TIMINGS['runs.workerConcurrency']}, ${DISPATCH_RUNS} runs at ` +
        `${DISPATCH_RATE_PER_SECOND}/s after ${WARMUP_RUNS} warm-up runs`,
    };
  } finally {
    await app?.close();
    await env.destroy();
  }
}
