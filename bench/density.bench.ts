import { Logger } from '@nestjs/common';
import Dockerode from 'dockerode';
import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { FakeModelServer, startFakeModelServer } from '../test/fixtures/fake-model-server';
import { apiClient } from '../test/support/api-client';
import { createTestEnvironment, startTestApp, TestApp } from '../test/support/test-app';
import { spawnAmbient, waitForExit } from '../test/support/worker-process';
import { SANDBOX_LABELS } from '../src/modules/execution/sandbox/sandbox.types';
import { waitFor } from '../test/support/wait';
import {
  describeHandouts,
  handoutStats,
  poolFilled,
  warmPoolOf,
  type Handouts,
  type WarmPool,
} from './warm-pool';
import { closeOnExit } from './closing';
import { CpuSplit, describeCpuSplit, watchCpuSplit } from './cpu-split';
import { loadAverage, machineFacts } from './machine';
import { ms, percentile, table } from './stats';
import { watchNeighbourCpu, watchProcessesCpu } from './thread-cpu';

/**
 * `npm run bench:density`: N runs (DENSITY_RUNS, default 100) created at once, each one model turn
 * asking for one command, then a turn that ends the run; the fake model thinks DENSITY_THINK_MS
 * (default 1000) per turn, so the ideal (model time) of every run and of the whole burst is two
 * turns. Per sandbox backend (DENSITY_BACKENDS, default `process,bubblewrap`; `docker` too) and
 * per role layout (DENSITY_LAYOUTS, default `combined,split`: one process with roles api+worker,
 * or the API in this process and a worker in a child process), in this order, in one run.
 * Docker runs with a warm pool of DENSITY_RUNS containers (AMBIENT_DOCKER_POOL_SIZE and _MAX), and
 * also without one when DENSITY_DOCKER_POOL (default `on`) says `on,off`. The burst starts once the
 * pool is full; the time it took to fill (from the app's start) is reported beside, not in it,
 * and so are the burst's pool hits and misses (ambient_sandbox_handout_seconds; combined only).
 *
 * Reported: wall time from the first POST to every run ended, per-run POST → end p50/p95, and the
 * latency of GET /agent/runs sampled in a bounded loop during the burst (the same loop sees runs
 * end, so an end time is known to one list round trip). In the combined layout this process is
 * the server too: its event-loop delay (p50/p99/max) is the server's, and its CPU time during the
 * burst (user + system, all threads: Ambient, the fake model and this client), per run, says what a
 * run costs independently of how loaded the host is; so does, for docker, the CPU time of the
 * docker daemons (dockerd, containerd and the containers' shims with the runc they ran) during
 * the burst. Also reported: how many cores other processes took meanwhile (the rest of the
 * machine's busy time, docker daemons apart). A benchmark, not a test:
 * a missed target is reported as MISSED and the process still exits 0.
 */

type Backend = 'process' | 'bubblewrap' | 'docker';
type Layout = 'combined' | 'split';

const RUNS = Number(process.env.DENSITY_RUNS ?? 100);
const THINK_MS = Number(process.env.DENSITY_THINK_MS ?? 1000);
const BACKENDS = (process.env.DENSITY_BACKENDS ?? 'process,bubblewrap').split(',') as Backend[];
const LAYOUTS = (process.env.DENSITY_LAYOUTS ?? 'combined,split').split(',') as Layout[];
const DOCKER_POOLS = (process.env.DENSITY_DOCKER_POOL ?? 'on').split(',').map((p) => p === 'on');
/** How long the pool may take to fill (100 containers made 4 at a time on a loaded daemon). */
const POOL_FILL_TIMEOUT_MS = 600_000;
const WARM_UP_RUNS = 3;
/** Pause between two list samples (the loop also ends on BURST_TIMEOUT_MS). */
const SAMPLE_PAUSE_MS = 25;
const BURST_TIMEOUT_MS = 180_000;
const TARGET_WALL_MS = 5000;
const TARGET_LIST_P95_MS = 100;
const IMAGE = 'ambient-agent:bookworm';
const TERMINAL = new Set(['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED']);

interface Config {
  backend: Backend;
  layout: Layout;
  /** docker: the warm pool's size and max (0: no pool). */
  pool: number;
}

interface BurstResult {
  wallMs: number;
  /** POST sent → run seen ended, per run. */
  endMs: number[];
  /** POST sent → the run's first model request, and → its second (the command's result), per run. */
  firstTurnMs: number[];
  secondTurnMs: number[];
  listMs: number[];
  succeeded: number;
  ended: number;
  failures: string[];
}

interface Result extends Config, BurstResult {
  loopDelay: { p50: number; p99: number; max: number } | null;
  /** CPU time (user + system, all threads) of this process during the burst; combined layout only. */
  cpuMs: number | null;
  /**
   * CPU time of this process's child processes during the burst, with what they reaped: the spawn
   * helpers and the sandboxes' processes they started (bwrap, socat, the commands); combined only.
   */
  childrenCpuMs: number | null;
  /** CPU time of the docker daemons during the burst (docker only). */
  dockerCpuMs: number | null;
  /** The burst's CPU split into user and system time (combined layout: the service in this process). */
  cpuSplit: CpuSplit | null;
  /** Cores other processes took during the burst, on average (docker daemons apart). */
  neighbourCores: number | null;
  /** docker with a pool: app start → the pool full, before the warm-up runs. */
  poolFillMs: number | null;
  /** The longest event-loop delay of this process while the pool filled (combined layout). */
  poolFillLoopMaxMs: number | null;
  /** docker with a pool, combined layout: the burst's hand-outs. */
  handouts: Handouts | null;
}

function progress(message: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

function scriptRun(model: FakeModelServer, script: string): void {
  model.script(script, [
    {
      delayMs: THINK_MS,
      then: { toolCalls: [{ name: 'run_command', arguments: { command: 'echo hi' } }] },
    },
    { delayMs: THINK_MS, then: { text: 'done' } },
  ]);
}

/** Creates `count` runs at once and follows them through the run list until all ended. */
async function burst(
  api: ReturnType<typeof apiClient>,
  model: FakeModelServer,
  name: string,
  count: number,
): Promise<BurstResult> {
  const sent = new Map<string, number>();
  const sentByScript = new Map<string, number>();
  const ended = new Map<string, { at: number; state: string; message: string }>();
  const listMs: number[] = [];
  const started = performance.now();
  const posts = Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const script = `${name}-${i}`;
      scriptRun(model, script);
      const at = performance.now();
      const created = await api.post('/agent/runs', { prompt: `[script:${script}]` });
      if (created.status >= 300) throw new Error(`POST /agent/runs: ${created.status}`);
      sent.set(created.body.run_id as string, at);
      sentByScript.set(script, at);
    }),
  );
  let postsDone = false;
  void posts.then(() => (postsDone = true)).catch(() => undefined);
  const deadline = started + BURST_TIMEOUT_MS;
  while (performance.now() < deadline && !(postsDone && ended.size >= sent.size)) {
    const t0 = performance.now();
    const list = await api.get(`/agent/runs?limit=${Math.min(500, count + 50)}`);
    const t1 = performance.now();
    listMs.push(t1 - t0);
    for (const item of (list.body.runs ?? []) as {
      run_id: string;
      state: string;
      status_message?: { message?: string };
    }[]) {
      if (sent.has(item.run_id) && !ended.has(item.run_id) && TERMINAL.has(item.state)) {
        ended.set(item.run_id, {
          at: t1,
          state: item.state,
          message: item.status_message?.message ?? '',
        });
      }
    }
    await new Promise((resolve) => setTimeout(resolve, SAMPLE_PAUSE_MS));
  }
  await posts;
  const wallMs = Math.max(...[...ended.values()].map((e) => e.at)) - started;
  const turn = (step: number) =>
    model.requests
      .filter((r) => r.step === step && r.script && sentByScript.has(r.script))
      .map((r) => r.receivedAt - sentByScript.get(r.script!)!);
  return {
    wallMs,
    firstTurnMs: turn(0),
    secondTurnMs: turn(1),
    endMs: [...ended].map(([runId, e]) => e.at - sent.get(runId)!),
    listMs,
    ended: ended.size,
    succeeded: [...ended.values()].filter((e) => e.state === 'SUCCEEDED').length,
    failures: [...ended.values()]
      .filter((e) => e.state !== 'SUCCEEDED')
      .map((e) => `${e.state}: ${e.message}`),
  };
}

async function startWorkerChild(
  env: ReturnType<typeof createTestEnvironment>,
  config: Config,
): Promise<ChildProcess> {
  const worker = spawnAmbient(
    env.childEnv({
      AMBIENT_ROLES: 'worker',
      AMBIENT_SANDBOX: config.backend,
      AMBIENT_SANDBOX_READONLY_PATHS: '',
      AMBIENT_DOCKER_IMAGE: IMAGE,
      AMBIENT_DOCKER_POOL_SIZE: String(config.pool),
      AMBIENT_DOCKER_POOL_MAX: String(config.pool),
      AMBIENT_WORKER_CONCURRENCY: String(RUNS),
      AMBIENT_MIGRATE_ON_START: 'false',
      ...(process.env.DENSITY_WORKER_NODE_OPTIONS
        ? { NODE_OPTIONS: process.env.DENSITY_WORKER_NODE_OPTIONS }
        : {}),
    }),
  );
  const timeout = setTimeout(() => worker.child.kill('SIGKILL'), 180_000);
  try {
    await worker.ready;
  } finally {
    clearTimeout(timeout);
  }
  return worker.child;
}

/** dockerd, containerd and the containers' shims (each with the runc it ran, reaped). */
function isDockerDaemon(comm: string): boolean {
  return comm === 'dockerd' || comm === 'containerd' || comm.startsWith('containerd-shim');
}

function configLabel(config: Config): string {
  if (config.backend !== 'docker') return config.backend;
  return config.pool > 0 ? `docker, pool ${config.pool}` : 'docker, pool off';
}

/** Resolves once the worker child's pool holds `count` idle containers (by their pool names). */
async function childPoolFilled(
  docker: Dockerode,
  worker: ChildProcess,
  count: number,
): Promise<void> {
  await waitFor(
    async () =>
      (
        await docker.listContainers({
          filters: { label: [SANDBOX_LABELS.poolOwner], name: ['ambient-pool-'] },
        })
      ).filter((c) => c.Labels[SANDBOX_LABELS.poolOwner].split('/')[2] === String(worker.pid)),
    (idle) => idle.length >= count,
    { timeoutMs: POOL_FILL_TIMEOUT_MS, intervalMs: 200, what: `${count} warm containers` },
  );
}

async function measure(config: Config, model: FakeModelServer): Promise<Result> {
  const { backend, layout, pool } = config;
  const label = `${backend}${pool > 0 ? `_pool${pool}` : ''}_${layout}`;
  const name = `${configLabel(config)}, ${layout}`;
  const env = createTestEnvironment(`bench_density_${label}`, model.url);
  const overrides = {
    'sandbox.backend': backend,
    'sandbox.readonlyPaths': '',
    'sandbox.docker.defaultImage': IMAGE,
    'sandbox.docker.poolSize': pool,
    'sandbox.docker.poolMax': pool,
    'runs.workerConcurrency': RUNS,
  };
  let app: TestApp | undefined;
  let worker: ChildProcess | undefined;
  const close = async () => {
    if (worker && worker.exitCode === null && worker.signalCode === null) {
      worker.kill('SIGTERM');
      await waitForExit(worker);
    }
    await app?.close();
    await env.destroy();
  };
  const release = closeOnExit(close);
  try {
    const appStarted = performance.now();
    app = await startTestApp(env, layout === 'combined' ? ['api', 'worker'] : ['api'], overrides);
    if (layout === 'split') worker = await startWorkerChild(env, config);
    const docker = new Dockerode();
    let warmPool: WarmPool | null = null;
    if (pool > 0 && layout === 'combined') {
      warmPool = await warmPoolOf(app);
      if (!warmPool) throw new Error('the docker backend has no warm pool');
    }
    /** Until the pool holds the whole burst again; not part of any timing but the fill's. */
    const filled = async (): Promise<void> => {
      if (warmPool) await poolFilled(warmPool, IMAGE, pool, POOL_FILL_TIMEOUT_MS);
      else if (worker && pool > 0) await childPoolFilled(docker, worker, pool);
    };
    let poolFillMs: number | null = null;
    let poolFillLoopMaxMs: number | null = null;
    if (pool > 0) {
      progress(`${name}: filling the pool (${pool})`);
      const fillLoop = monitorEventLoopDelay({ resolution: 10 });
      fillLoop.enable();
      await filled();
      fillLoop.disable();
      poolFillMs = performance.now() - appStarted;
      if (warmPool) poolFillLoopMaxMs = fillLoop.max / 1e6;
    }
    const api = apiClient(app.baseUrl, app.apiKey);
    progress(`${name}: ${WARM_UP_RUNS} warm-up runs`);
    await burst(api, model, `warm-${label}`, WARM_UP_RUNS);
    await filled();
    progress(`${name}: ${RUNS} runs at once`);
    const handoutsBefore = warmPool ? await handoutStats(app.ambient.metrics) : null;
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    const cpu = process.cpuUsage();
    const childrenCpu = childrenCpuMs();
    const neighbours = watchNeighbourCpu();
    const dockerCpu = watchProcessesCpu(isDockerDaemon);
    const split = watchCpuSplit();
    const burstStarted = performance.now();
    const result = await burst(api, model, `burst-${label}`, RUNS);
    const cpuSplit = layout === 'combined' ? split() : null;
    const used = process.cpuUsage(cpu);
    const childrenUsed = childrenCpuMs(childrenCpu);
    const dockerCpuMs = backend === 'docker' ? dockerCpu() : null;
    const othersCores = neighbours();
    const burstMs = performance.now() - burstStarted;
    loop.disable();
    return {
      ...config,
      ...result,
      poolFillMs,
      poolFillLoopMaxMs,
      handouts: handoutsBefore ? await handoutStats(app.ambient.metrics, handoutsBefore) : null,
      loopDelay:
        layout === 'combined'
          ? {
              p50: loop.percentile(50) / 1e6,
              p99: loop.percentile(99) / 1e6,
              max: loop.max / 1e6,
            }
          : null,
      cpuMs: layout === 'combined' ? (used.user + used.system) / 1000 : null,
      childrenCpuMs: layout === 'combined' ? childrenUsed : null,
      dockerCpuMs,
      cpuSplit,
      neighbourCores:
        othersCores === null ? null : Math.max(0, othersCores - (dockerCpuMs ?? 0) / burstMs),
    };
  } finally {
    release();
    await close();
  }
}

/**
 * CPU time (ms) of this process's children (user + system, with their reaped children's), from
 * /proc; since `before` (a previous call's figures) when given: the total, else per child.
 */
function childrenCpuMs(): Map<number, number>;
function childrenCpuMs(before: Map<number, number>): number;
function childrenCpuMs(before?: Map<number, number>): Map<number, number> | number {
  const now = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    // Fields after the command (which may hold spaces): state ppid … utime stime cutime cstime.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[1]) !== process.pid) continue;
    const ticks = fields.slice(11, 15).reduce((sum, f) => sum + Number(f), 0);
    now.set(Number(entry), (ticks * 1000) / CLOCK_TICKS);
  }
  if (!before) return now;
  let total = 0;
  for (const [pid, ms] of now) total += ms - (before.get(pid) ?? 0);
  return total;
}

/** USER_HZ of /proc's times (100 on Linux everywhere that matters). */
const CLOCK_TICKS = 100;

function p50p95(values: number[]): string {
  return `${ms(percentile(values, 50))} / ${ms(percentile(values, 95))}`;
}

async function main(): Promise<void> {
  Logger.overrideLogger(['warn', 'error']);
  const facts = machineFacts();
  const model = await startFakeModelServer();
  const results: Result[] = [];
  try {
    for (const backend of BACKENDS) {
      const pools = backend === 'docker' ? DOCKER_POOLS.map((on) => (on ? RUNS : 0)) : [0];
      for (const pool of pools) {
        for (const layout of LAYOUTS) results.push(await measure({ backend, layout, pool }, model));
      }
    }
  } finally {
    await model.close();
  }
  facts.push(`load average at end: ${loadAverage()}`);

  const idealMs = 2 * THINK_MS;
  const verdict = (ok: boolean): string => (ok ? 'met' : 'MISSED');
  const rows = [
    [
      'Backend',
      'Roles',
      `${RUNS} runs: all ended`,
      'ideal',
      'POST→1st model request p50 / p95',
      'POST→2nd model request p50 / p95',
      'POST→end p50 / p95',
      'GET /agent/runs p50 / p95 (samples)',
      'event-loop delay p50 / p99 / max',
      'process CPU per run',
      'child processes CPU per run',
      'docker daemons CPU per run',
      'other processes (cores)',
      'succeeded',
      'pool: fill (not in the burst; its loop delay max); burst hand-outs',
    ],
  ];
  for (const r of results) {
    rows.push([
      configLabel(r),
      r.layout === 'combined' ? 'api+worker, one process' : 'api | worker processes',
      `${(r.wallMs / 1000).toFixed(2)} s`,
      `${(idealMs / 1000).toFixed(2)} s`,
      p50p95(r.firstTurnMs),
      p50p95(r.secondTurnMs),
      p50p95(r.endMs),
      `${p50p95(r.listMs)} (${r.listMs.length})`,
      r.loopDelay
        ? `${ms(r.loopDelay.p50)} / ${ms(r.loopDelay.p99)} / ${ms(r.loopDelay.max)}`
        : '(worker in a child)',
      r.cpuMs === null ? '(worker in a child)' : ms(r.cpuMs / RUNS),
      r.childrenCpuMs === null ? '(worker in a child)' : ms(r.childrenCpuMs / RUNS),
      r.dockerCpuMs === null ? '-' : ms(r.dockerCpuMs / RUNS),
      r.neighbourCores === null ? 'n/a' : r.neighbourCores.toFixed(2),
      `${r.succeeded}/${RUNS}${r.ended < RUNS ? ` (${RUNS - r.ended} not ended)` : ''}`,
      r.poolFillMs === null
        ? '(no pool)'
        : `${(r.poolFillMs / 1000).toFixed(1)} s${r.poolFillLoopMaxMs === null ? '' : ` (${ms(r.poolFillLoopMaxMs)})`}; ${r.handouts ? describeHandouts(r.handouts) : '(worker in a child)'}`,
    ]);
  }
  const targets = results
    .filter((r) => r.backend !== 'process')
    .map((r) => {
      const p95 = percentile(r.listMs, 95);
      return `target: ${configLabel(r)} (${r.layout}) ${RUNS} runs ≤ ${TARGET_WALL_MS / 1000} s: ${(r.wallMs / 1000).toFixed(2)} s ${verdict(r.wallMs <= TARGET_WALL_MS && r.ended === RUNS)}; list p95 ≤ ${TARGET_LIST_P95_MS} ms: ${ms(p95)} ${verdict(p95 <= TARGET_LIST_P95_MS)}`;
    });
  const failures = results.flatMap((r) =>
    r.failures.slice(0, 5).map((f) => `  ${configLabel(r)} (${r.layout}): ${f}`),
  );
  process.stdout.write(
    [
      '',
      'Ambient density benchmark',
      ...facts,
      `${RUNS} runs created at once (after ${WARM_UP_RUNS} warm-up runs); each: a model turn of ${THINK_MS} ms asking for one command (echo), then a turn of ${THINK_MS} ms that ends the run; AMBIENT_WORKER_CONCURRENCY=${RUNS}`,
      '',
      table(rows),
      '',
      ...results
        .filter((r) => r.cpuSplit)
        .map((r) => `${configLabel(r)}: ${describeCpuSplit(r.cpuSplit, RUNS, 'run')}`),
      '',
      ...targets,
      ...(failures.length ? ['', 'Runs that did not succeed (first 5 each):', ...failures] : []),
      '',
    ].join('\n'),
  );
}

main().then(
  () => process.exit(0),
  (err: Error) => {
    process.stderr.write(`bench:density failed: ${err.stack ?? err.message}\n`);
    process.exit(1);
  },
);
