import { RunQueue } from '../src/modules/runs/run-queue.service';
import { apiClient } from './support/api-client';
import { startTestApp, TestApp } from './support/test-app';
import { useTestApp } from './support/use-test-app';
import { waitFor } from './support/wait';

const LIMIT = 3;
const RUNS = 20;
const TERMINAL = ['FAILED', 'ERROR', 'CANCELLED'];

interface SlotEvent {
  run_id: string;
  event_type: string;
  occurred_at: Date;
}

/** The most runs whose [claimed, ended] intervals overlap at one instant (ends first on ties). */
function maxOverlap(events: SlotEvent[]): number {
  const points = events
    .map((e) => ({
      at: new Date(e.occurred_at).getTime(),
      delta: e.event_type === 'oz_run_claimed' ? 1 : -1,
    }))
    .sort((a, b) => a.at - b.at || a.delta - b.delta);
  let current = 0;
  let max = 0;
  for (const point of points) {
    current += point.delta;
    max = Math.max(max, current);
  }
  return max;
}

describe('max_concurrent_runs across two api + worker replicas', () => {
  const { api, app, env, model } = useTestApp('limits_replicas', ['api', 'worker']);
  let second: TestApp;

  beforeAll(async () => {
    second = await startTestApp(env, ['api', 'worker']);
  });

  afterAll(async () => {
    await second?.close();
  });

  /** Each run with its Bull job as Redis has it (its state, and its fields when in no list). */
  const withJobs = async (runs: { id: string; state: string }[]) => {
    const queue = app.ambient.app.get(RunQueue).queue;
    return Promise.all(
      runs.map(async (run) => {
        const job = await queue.getJob(run.id);
        const state = job ? await job.getState() : 'none';
        const fields = state === 'stuck' ? await queue.client.hgetall(queue.toKey(run.id)) : {};
        return { ...run, job: state, ...(state === 'stuck' ? { fields } : {}) };
      }),
    );
  };

  // 20 runs through 3 slots are 7 rounds of sandbox and model call: slow on a busy machine.
  it(`never runs more than ${LIMIT} at once when ${RUNS} runs race for the slots`, async () => {
    expect((await api.put('/limits', { max_concurrent_runs: LIMIT })).status).toBe(200);
    model.script('race', [{ delayMs: 300, then: { text: 'raced' } }]);
    const replicas = [api, apiClient(second.baseUrl, second.apiKey)];
    const created = await Promise.all(
      Array.from({ length: RUNS }, (_, i) =>
        replicas[i % 2].post('/agent/runs', { prompt: `race ${i} [script:race]` }),
      ),
    );
    expect(created.map((res) => res.status)).toEqual(Array(RUNS).fill(200));
    expect(created.filter((res) => res.body.at_capacity === true).length).toBeGreaterThan(0);
    const ids = created.map((res) => res.body.run_id as string);

    // Watches the database while the runs drain: how many hold a slot at each look.
    let sampledMax = 0;
    const states = await waitFor(
      async () => {
        const rows = (await app.dataSource.query(
          `SELECT state, COUNT(*) AS n FROM runs WHERE id IN (?) GROUP BY state`,
          [ids],
        )) as { state: string; n: string | number }[];
        const count = (state: string) => Number(rows.find((r) => r.state === state)?.n ?? 0);
        sampledMax = Math.max(sampledMax, count('CLAIMED') + count('INPROGRESS'));
        // Named in a timeout's message: which runs did not succeed, and where each stands.
        const others = rows.some((r) => r.state !== 'SUCCEEDED')
          ? await withJobs(
              await app.dataSource.query(
                `SELECT id, state, at_capacity, execution_count, status_message FROM runs
                  WHERE id IN (?) AND state <> 'SUCCEEDED'`,
                [ids],
              ),
            )
          : [];
        return { succeeded: count('SUCCEEDED'), sampledMax, others };
      },
      // A run that ended otherwise fails the test at once, with its status.
      (seen) =>
        seen.succeeded === RUNS ||
        (seen.others as { state: string }[]).some((run) => TERMINAL.includes(run.state)),
      { timeoutMs: 150_000, intervalMs: 20, what: `all ${RUNS} runs to succeed` },
    );
    expect(states.others).toEqual([]);
    expect(states.succeeded).toBe(RUNS);
    expect(sampledMax).toBeLessThanOrEqual(LIMIT);

    // Exactly, from the timeline: claims are stamped after the slot's lock is held and ends
    // before the slot is given back, so recorded intervals can only overlap less than real ones.
    const events = (await app.dataSource.query(
      `SELECT run_id, event_type, occurred_at FROM run_events
        WHERE run_id IN (?) AND event_type IN ('oz_run_claimed', 'oz_run_done')`,
      [ids],
    )) as SlotEvent[];
    expect(events.filter((e) => e.event_type === 'oz_run_claimed')).toHaveLength(RUNS);
    expect(maxOverlap(events)).toBe(LIMIT);
    // Every run executed once: no claim was refused after taking a slot, none retried.
    const executions = (await app.dataSource.query(
      `SELECT MAX(execution_count) AS most FROM runs WHERE id IN (?)`,
      [ids],
    )) as { most: number }[];
    expect(Number(executions[0].most)).toBe(1);
  }, 180_000);
});
