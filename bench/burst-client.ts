import { apiClient } from '../test/support/api-client';

/**
 * bench:density's client, in a process of its own (forked by the bench): it sends a burst's
 * POST /agent/runs and samples GET /agent/runs until every run ended, so that its HTTP work is
 * not counted as the service's CPU (in the combined layout the service is the bench's process).
 * Told what to do over IPC (`BurstOrder`); answers with `BurstReport`, then its own CPU time.
 * Times are `performance.timeOrigin + performance.now()`, comparable across processes.
 */

export interface BurstOrder {
  op: 'burst';
  baseUrl: string;
  apiKey: string;
  /** The scripts (fake model) of the runs to create, one run each. */
  scripts: string[];
  samplePauseMs: number;
  timeoutMs: number;
}

export interface BurstReport {
  startedAt: number;
  /** Per run: its script, when its POST was sent, when it was seen ended, in which state. */
  runs: { script: string; sentAt: number; endedAt?: number; state?: string; message?: string }[];
  listMs: number[];
  /** This process's CPU time during the burst (user and system ms). */
  cpu: { userMs: number; systemMs: number };
}

/** `count` GET /agent/runs?limit=… one after another: what one list sample costs the service. */
export interface ListsOrder {
  op: 'lists';
  baseUrl: string;
  apiKey: string;
  limit: number;
  count: number;
}

const TERMINAL = new Set(['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED']);
/** The page size of the burst's list samples. */
export const listLimit = (runs: number) => Math.min(500, runs + 50);

const now = () => performance.timeOrigin + performance.now();

async function burst(order: BurstOrder): Promise<BurstReport> {
  const api = apiClient(order.baseUrl, order.apiKey);
  const cpuBefore = process.cpuUsage();
  const runs: BurstReport['runs'] = [];
  const byId = new Map<string, BurstReport['runs'][number]>();
  const listMs: number[] = [];
  const startedAt = now();
  let postsDone = false;
  const posts = Promise.all(
    order.scripts.map(async (script) => {
      const run: BurstReport['runs'][number] = { script, sentAt: now() };
      runs.push(run);
      const created = await api.post('/agent/runs', { prompt: `[script:${script}]` });
      if (created.status >= 300) throw new Error(`POST /agent/runs: ${created.status}`);
      byId.set(created.body.run_id as string, run);
    }),
  ).finally(() => (postsDone = true));
  posts.catch(() => undefined);
  const limit = listLimit(order.scripts.length);
  const deadline = startedAt + order.timeoutMs;
  let ended = 0;
  while (now() < deadline && !(postsDone && ended >= byId.size)) {
    const t0 = now();
    const list = await api.get(`/agent/runs?limit=${limit}`);
    const t1 = now();
    listMs.push(t1 - t0);
    for (const item of (list.body.runs ?? []) as {
      run_id: string;
      state: string;
      status_message?: { message?: string };
    }[]) {
      const run = byId.get(item.run_id);
      if (run && run.endedAt === undefined && TERMINAL.has(item.state)) {
        run.endedAt = t1;
        run.state = item.state;
        run.message = item.status_message?.message ?? '';
        ended++;
      }
    }
    await new Promise((resolve) => setTimeout(resolve, order.samplePauseMs));
  }
  await posts;
  const used = process.cpuUsage(cpuBefore);
  return {
    startedAt,
    runs,
    listMs,
    cpu: { userMs: used.user / 1000, systemMs: used.system / 1000 },
  };
}

process.on('disconnect', () => process.exit(0));
async function lists(order: ListsOrder): Promise<{ listMs: number[] }> {
  const api = apiClient(order.baseUrl, order.apiKey);
  const listMs: number[] = [];
  for (let i = 0; i < order.count; i++) {
    const t0 = now();
    await api.get(`/agent/runs?limit=${order.limit}`);
    listMs.push(now() - t0);
  }
  return { listMs };
}

process.on('message', (order: BurstOrder | ListsOrder) => {
  (order.op === 'burst' ? burst(order) : lists(order)).then(
    (report) => process.send?.({ report }),
    (err: Error) => process.send?.({ error: err.stack ?? err.message }),
  );
});
process.send?.({ ready: true });
