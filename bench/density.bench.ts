import { Logger } from '@nestjs/common';
import Dockerode from 'dockerode';
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { FakeStep } from '../test/fixtures/fake-model-server';
import { createTestEnvironment, startTestApp, TestApp } from '../test/support/test-app';
import { spawnAmbient, waitForExit } from '../test/support/worker-process';
import { SANDBOX_LABELS } from '../src/modules/workers/sandbox/sandbox.types';
import { waitFor } from '../test/support/wait';
import {
  describeHandouts,
  describeReturns,
  handoutStats,
  poolFilled,
  removeLeftContainers,
  returnStats,
  warmPoolOf,
  type Handouts,
  type WarmPool,
} from './warm-pool';
import { closeOnExit } from './closing';
import { BurstOrder, BurstReport, listLimit, ListsOrder } from './burst-client';
import { cpuTotal, CpuSplit, describeCpuSplit, UserSystemMs, watchCpuSplit } from './cpu-split';
import { loadAverage, machineFacts } from './machine';
import { ModelServerProcess, startModelServerProcess } from './model-server-client';
import { ms, percentile, table } from './stats';
import { type StoresCpu, watchNeighbourCpu, watchStoresCpu } from './thread-cpu';

/**
 * `npm run bench:density`: N runs (DENSITY_RUNS, default 100) created at once, each one model turn
 * asking for one command (DENSITY_COMMANDS: other counts, e.g. `1,5`, each measured, and what one
 * more command costs printed), then a turn that ends the run; the fake model thinks DENSITY_THINK_MS
 * (default 1000) per turn, so the ideal (model time) of every run and of the whole burst is two
 * turns. Per sandbox backend (DENSITY_BACKENDS, default `process,bubblewrap`; `docker` too) and
 * per role layout (DENSITY_LAYOUTS, default `combined,split`: one process with roles api+worker,
 * or the API in this process and a worker in a child process), in this order, in one run.
 * Docker runs with a warm pool of DENSITY_RUNS containers (AMBIENT_DOCKER_POOL_SIZE and _MAX), and
 * also without one when DENSITY_DOCKER_POOL (default `on`) says `on,off`; with the pool, closed
 * sandboxes' containers go back to it (AMBIENT_DOCKER_POOL_REUSE), and are also removed and
 * replaced in a second pass when DENSITY_DOCKER_REUSE (default `on`) says `on,off`. bubblewrap's
 * sandboxes are made by the compiled spawner (the default), and also by bwrap, the baseline in the
 * same run, when DENSITY_BUBBLEWRAP_MAKERS says `spawner,bwrap`. The burst starts once the
 * pool is full; the time it took to fill (from the app's start) is reported beside, not in it,
 * and so are the burst's pool hits and misses (ambient_sandbox_handout_seconds; combined only).
 * After the burst the bench waits for the pool's upkeep (the burst's containers back in the pool,
 * or removed and as many made in their place; what became of them is printed) and counts its CPU
 * into the CPU per run (combined only).
 *
 * Reported: wall time from the first POST to every run ended, per-run POST → end p50/p95, and the
 * latency of GET /agent/runs sampled in a bounded loop during the burst (the same loop sees runs
 * end, so an end time is known to one list round trip). In the combined layout this process is
 * the server too: its event-loop delay (p50/p99/max) is the server's, and its CPU time during the
 * burst (user + system, all threads), per run, says what a run costs independently of how loaded
 * the host is: the client that sends the POSTs and samples the list, and the fake model server,
 * run in processes of their own, and their CPU is printed beside, not counted; so does, for docker, the CPU time of the
 * docker daemons (dockerd, containerd and the containers' shims with the runc they ran) during
 * the burst. Also reported: how many cores other processes took meanwhile (the rest of the
 * machine's busy time, docker daemons apart). A benchmark, not a test:
 * a missed target is reported as MISSED and the process still exits 0.
 */

type Backend = 'process' | 'bubblewrap' | 'docker';
type Layout = 'combined' | 'split';
type Maker = 'spawner' | 'bwrap';

const RUNS = Number(process.env.DENSITY_RUNS ?? 100);
const THINK_MS = Number(process.env.DENSITY_THINK_MS ?? 1000);
const BACKENDS = (process.env.DENSITY_BACKENDS ?? 'process,bubblewrap').split(',') as Backend[];
const LAYOUTS = (process.env.DENSITY_LAYOUTS ?? 'combined,split').split(',') as Layout[];
/**
 * Commands each run's first turn asks for (a list, e.g. `1,5`: every configuration at each); with
 * two counts, what one more command costs per backend is printed, from the same run.
 */
const COMMANDS = (process.env.DENSITY_COMMANDS ?? '1').split(',').map(Number);
const DOCKER_POOLS = (process.env.DENSITY_DOCKER_POOL ?? 'on').split(',').map((p) => p === 'on');
/**
 * What makes bubblewrap's sandboxes (DENSITY_BUBBLEWRAP_MAKERS, default `spawner`; `spawner,bwrap`
 * measures bwrap's too, AMBIENT_BUBBLEWRAP_CONFINE=false, as the baseline in the same run).
 */
const BUBBLEWRAP_MAKERS = (process.env.DENSITY_BUBBLEWRAP_MAKERS ?? 'spawner').split(
  ',',
) as Maker[];
/** docker with a pool: closed sandboxes' containers back in the pool (`on`), removed (`off`), or both. */
const DOCKER_REUSE = (process.env.DENSITY_DOCKER_REUSE ?? 'on').split(',').map((p) => p === 'on');
/** How long the pool may take to fill (100 containers made 4 at a time on a loaded daemon). */
const POOL_FILL_TIMEOUT_MS = 600_000;
const WARM_UP_RUNS = 3;
/** Pause between two list samples (the loop also ends on BURST_TIMEOUT_MS). */
const SAMPLE_PAUSE_MS = 25;
const BURST_TIMEOUT_MS = 180_000;
/** List samples timed after the burst, to take the sampling's cost out of the service's CPU. */
const LIST_CALIBRATION = 20;
/** Targets, as ratios to another backend's figure in the same run, and CPU per run (ms). */
const TARGET_BWRAP_PER_PROCESS_WALL = 1.5;
const TARGET_DOCKER_PER_BWRAP_WALL = 1.5;
const TARGET_CPU_PER_RUN_MS: Record<Backend, number | null> = {
  process: null,
  bubblewrap: 50,
  docker: 80,
};
const TARGET_LIST_P95_MS = 100;
const IMAGE = 'ambient-agent:bookworm';

interface Config {
  backend: Backend;
  layout: Layout;
  /** docker: the warm pool's size and max (0: no pool). */
  pool: number;
  /** docker with a pool: AMBIENT_DOCKER_POOL_REUSE. */
  reuse: boolean;
  /** bubblewrap: what makes its sandboxes (AMBIENT_BUBBLEWRAP_CONFINE). */
  maker: Maker;
  /** Commands the run's first turn asks for (DENSITY_COMMANDS). */
  commands: number;
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
  /** The client process's own CPU during the burst (not the service's; not counted). */
  clientCpu: { userMs: number; systemMs: number };
  /** The model server process's CPU during the burst (not the service's; not counted). */
  modelCpu: { userMs: number; systemMs: number };
}

interface Result extends Config, BurstResult {
  loopDelay: { p50: number; p99: number; max: number } | null;
  /**
   * The burst's CPU split into user and system time (combined layout: the service in this
   * process), the client process left out and the service's cost of the list samples taken out.
   */
  cpuSplit: CpuSplit | null;
  /** The service's CPU (ms) per list sample, measured after the burst, and how many were taken. */
  listCostMs: number | null;
  /**
   * MariaDB's and Redis's CPU (ms) per run during the burst, the list samples' share taken out
   * (combined layout); beside the CPU per run, not in it: they serve every replica.
   */
  stores: StoresCpu | null;
  /** Cores other processes took during the burst, on average (docker daemons apart). */
  neighbourCores: number | null;
  /** docker with a pool: app start → the pool full, before the warm-up runs. */
  poolFillMs: number | null;
  /** The longest event-loop delay of this process while the pool filled (combined layout). */
  poolFillLoopMaxMs: number | null;
  /** docker with a pool, combined layout: the burst's hand-outs. */
  handouts: Handouts | null;
  /**
   * docker with a pool, combined layout: the pool's upkeep after the burst (each run's container
   * removed and another made in its place), its CPU split and how long it took; null otherwise.
   */
  upkeep: { cpuSplit: CpuSplit | null; wallMs: number; returns: Record<string, number> } | null;
}

function progress(message: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

/** A run's script: a turn asking for `commands` commands, then a turn that ends it. */
function runSteps(commands: number): FakeStep[] {
  const call = { name: 'run_command', arguments: { command: 'echo hi' } };
  return [
    { delayMs: THINK_MS, then: { toolCalls: Array.from({ length: commands }, () => call) } },
    { delayMs: THINK_MS, then: { text: 'done' } },
  ];
}

/** The bench's client process (burst-client.ts): it sends the POSTs and samples the list. */
interface Client {
  pid: number;
  ask<T>(order: BurstOrder | ListsOrder): Promise<T>;
  close(): void;
}

async function startClient(): Promise<Client> {
  const child = fork(join(__dirname, 'burst-client.ts'), [], {
    execArgv: ['-r', '@swc-node/register'],
    env: { ...process.env, SWCRC: 'true' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (code) => reject(new Error(`the bench client exited (${code})`)));
  });
  return {
    pid: child.pid!,
    ask: <T>(order: BurstOrder | ListsOrder) =>
      new Promise<T>((resolve, reject) => {
        child.once('message', (m: { report?: T; error?: string }) =>
          m.error ? reject(new Error(m.error)) : resolve(m.report as T),
        );
        child.send(order);
      }),
    close: () => child.kill(),
  };
}

/** Creates `count` runs at once (from the client process) and follows them until all ended. */
async function burst(
  client: Client,
  app: TestApp,
  model: ModelServerProcess,
  name: string,
  count: number,
  commands: number,
): Promise<BurstResult> {
  const scripts = Array.from({ length: count }, (_, i) => `${name}-${i}`);
  await model.script(scripts.map((script) => [script, runSteps(commands)]));
  const modelCpuBefore = await model.cpu();
  const report = await client.ask<BurstReport>({
    op: 'burst',
    baseUrl: app.baseUrl,
    apiKey: app.apiKey,
    scripts,
    samplePauseMs: SAMPLE_PAUSE_MS,
    timeoutMs: BURST_TIMEOUT_MS,
  });
  const modelCpu = await model.cpu();
  const requests = await model.requests(`${name}-`);
  const sentByScript = new Map(report.runs.map((r) => [r.script, r.sentAt]));
  const ended = report.runs.filter((r) => r.endedAt !== undefined);
  const turn = (step: number) =>
    requests
      .filter((r) => r.step === step && r.script && sentByScript.has(r.script))
      .map((r) => r.receivedAt - sentByScript.get(r.script!)!);
  return {
    wallMs: Math.max(...ended.map((r) => r.endedAt!)) - report.startedAt,
    firstTurnMs: turn(0),
    secondTurnMs: turn(1),
    endMs: ended.map((r) => r.endedAt! - r.sentAt),
    listMs: report.listMs,
    ended: ended.length,
    succeeded: ended.filter((r) => r.state === 'SUCCEEDED').length,
    failures: ended.filter((r) => r.state !== 'SUCCEEDED').map((r) => `${r.state}: ${r.message}`),
    clientCpu: report.cpu,
    modelCpu: {
      userMs: (modelCpu.user - modelCpuBefore.user) / 1000,
      systemMs: (modelCpu.system - modelCpuBefore.system) / 1000,
    },
  };
}

/**
 * What one GET /agent/runs sample costs, measured after the burst (LIST_CALIBRATION lists of the
 * same page, one after another): the service's CPU (this process) and MariaDB's and Redis's, what
 * the bench's sampling added to them.
 */
async function listCostMs(
  client: Client,
  app: TestApp,
): Promise<{ serviceMs: number; stores: StoresCpu | null }> {
  const before = process.cpuUsage();
  const stores = watchStoresCpu();
  await client.ask({
    op: 'lists',
    baseUrl: app.baseUrl,
    apiKey: app.apiKey,
    limit: listLimit(RUNS),
    count: LIST_CALIBRATION,
  });
  const used = process.cpuUsage(before);
  const storesMs = stores();
  return {
    serviceMs: (used.user + used.system) / 1000 / LIST_CALIBRATION,
    stores: storesMs && {
      databaseMs: storesMs.databaseMs / LIST_CALIBRATION,
      redisMs: storesMs.redisMs / LIST_CALIBRATION,
    },
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
      AMBIENT_BUBBLEWRAP_CONFINE: String(config.maker === 'spawner'),
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

function configLabel(config: Config): string {
  const commands = config.commands === 1 ? '' : `, ${config.commands} commands`;
  return `${backendLabel(config)}${commands}`;
}

function backendLabel(config: Config): string {
  if (config.backend === 'bubblewrap' && config.maker === 'bwrap')
    return 'bubblewrap (made by bwrap)';
  if (config.backend !== 'docker') return config.backend;
  if (config.pool === 0) return 'docker, pool off';
  return `docker, pool ${config.pool}${config.reuse ? '' : ', no reuse'}`;
}

/**
 * Resolves once this process's pool holds `count` ready containers and no other of its containers
 * is left (those of the burst's runs back in the pool, or removed). The daemon is asked once a
 * second, and only once the pool is full: its listings cost the daemon and this process CPU that
 * the upkeep is charged with.
 */
async function upkeepDone(docker: Dockerode, pool: WarmPool, count: number): Promise<void> {
  const what = 'the pool to be refilled';
  await waitFor(
    () => Promise.resolve(pool.readyCount(IMAGE)),
    (ready) => ready >= count,
    { timeoutMs: POOL_FILL_TIMEOUT_MS, intervalMs: 100, what },
  );
  await waitFor(
    async () =>
      (
        await docker.listContainers({ all: true, filters: { label: [SANDBOX_LABELS.poolOwner] } })
      ).filter((c) => c.Labels[SANDBOX_LABELS.poolOwner].split('/')[2] === String(process.pid)),
    (ours) => ours.length === count,
    { timeoutMs: POOL_FILL_TIMEOUT_MS, intervalMs: 1000, what },
  );
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

async function measure(config: Config, model: ModelServerProcess, client: Client): Promise<Result> {
  const { backend, layout, pool, reuse, commands, maker } = config;
  const label = `${backend}${maker === 'bwrap' ? '_bwrap' : ''}${pool > 0 ? `_pool${pool}${reuse ? '' : '_noreuse'}` : ''}_${layout}${commands === 1 ? '' : `_c${commands}`}`;
  const name = `${configLabel(config)}, ${layout}`;
  const env = createTestEnvironment(`bench_density_${label}`, model.url);
  const overrides = {
    'sandbox.backend': backend,
    'sandbox.readonlyPaths': '',
    'sandbox.docker.defaultImage': IMAGE,
    'sandbox.docker.poolSize': pool,
    'sandbox.docker.poolMax': pool,
    'sandbox.docker.poolReuse': reuse,
    'sandbox.bubblewrap.confine': maker === 'spawner',
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
    if (backend === 'docker') {
      const left = await removeLeftContainers(env.config(['worker'], overrides));
      if (left > 0) progress(`${name}: removed ${left} containers its closed processes left`);
    }
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
    progress(`${name}: ${WARM_UP_RUNS} warm-up runs`);
    await burst(client, app, model, `warm-${label}`, WARM_UP_RUNS, config.commands);
    await filled();
    progress(`${name}: ${RUNS} runs at once`);
    const handoutsBefore = warmPool ? await handoutStats(app.ambient.metrics) : null;
    const returnsBefore = await returnStats(app.ambient.metrics);
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    const neighbours = watchNeighbourCpu();
    // The stores' look reads /proc for every process: before the service's CPU starts counting.
    const storesDuringBurst = watchStoresCpu();
    const split = watchCpuSplit([client.pid, model.pid]);
    const burstStarted = performance.now();
    const result = await burst(client, app, model, `burst-${label}`, RUNS, config.commands);
    const measured = split();
    const storesMs = storesDuringBurst();
    const othersCores = neighbours();
    const burstMs = performance.now() - burstStarted;
    loop.disable();
    const combined = layout === 'combined';
    let upkeep: Result['upkeep'] = null;
    if (warmPool) {
      progress(`${name}: the pool's upkeep (${RUNS} containers back in the pool or replaced)`);
      const upkeepCpu = watchCpuSplit([client.pid, model.pid]);
      const upkeepStarted = performance.now();
      await upkeepDone(docker, warmPool, pool);
      upkeep = {
        cpuSplit: upkeepCpu(),
        wallMs: performance.now() - upkeepStarted,
        returns: await returnStats(app.ambient.metrics, returnsBefore),
      };
    }
    const perList = combined ? await listCostMs(client, app) : null;
    const samples = result.listMs.length;
    const cpuSplit =
      measured && perList
        ? {
            ...measured,
            service: withoutSampling(measured.service, perList.serviceMs * samples),
          }
        : null;
    const stores =
      storesMs && perList?.stores
        ? {
            databaseMs:
              Math.max(0, storesMs.databaseMs - perList.stores.databaseMs * samples) / RUNS,
            redisMs: Math.max(0, storesMs.redisMs - perList.stores.redisMs * samples) / RUNS,
          }
        : null;
    // The client's and the model server's CPU are the bench's own, and so are the daemons'
    // (counted apart).
    const benchOwnMs =
      result.clientCpu.userMs +
      result.clientCpu.systemMs +
      result.modelCpu.userMs +
      result.modelCpu.systemMs +
      (measured ? measured.daemons.userMs + measured.daemons.systemMs : 0);
    return {
      ...config,
      ...result,
      poolFillMs,
      poolFillLoopMaxMs,
      handouts: handoutsBefore ? await handoutStats(app.ambient.metrics, handoutsBefore) : null,
      upkeep,
      loopDelay: combined
        ? {
            p50: loop.percentile(50) / 1e6,
            p99: loop.percentile(99) / 1e6,
            max: loop.max / 1e6,
          }
        : null,
      cpuSplit,
      listCostMs: perList?.serviceMs ?? null,
      stores,
      neighbourCores: othersCores === null ? null : Math.max(0, othersCores - benchOwnMs / burstMs),
    };
  } finally {
    release();
    await close();
  }
}

function cpuCell(r: Result): string {
  if (!r.cpuSplit) return '(worker in a child)';
  const burst = cpuTotal(r.cpuSplit, RUNS);
  const all = cpuPerRun(r);
  if (!r.upkeep) return ms(burst);
  return all === null
    ? `${ms(burst)} (+ upkeep: n/a)`
    : `${ms(burst)} + ${ms(all - burst)} = ${ms(all)}`;
}

/** `used` less the service's cost of the list samples (split in the ratio of user to system). */
function withoutSampling(used: UserSystemMs, samplingMs: number) {
  const total = used.userMs + used.systemMs;
  if (total <= 0) return used;
  const keep = Math.max(0, total - samplingMs) / total;
  return { userMs: used.userMs * keep, systemMs: used.systemMs * keep };
}

/**
 * The targets, each a ratio of two figures of this run (so that the machine's speed and load
 * cancel out) or a CPU time per run (which the load does not stretch as it does wall time).
 */
function ratioTargets(results: Result[]): string[] {
  const verdict = (ok: boolean): string => (ok ? 'met' : 'MISSED');
  const lines: string[] = [];
  for (const [layout, commands] of LAYOUTS.flatMap((l) => COMMANDS.map((c) => [l, c] as const))) {
    // bubblewrap as it is made by default (the spawner); bwrap's making is the baseline beside it.
    const of = (backend: Backend, pooled?: boolean, maker: Maker = 'spawner') =>
      results.find(
        (r) =>
          r.layout === layout &&
          r.commands === commands &&
          r.backend === backend &&
          r.maker === maker &&
          (pooled === undefined || (r.pool > 0 && r.reuse) === pooled) &&
          r.ended === RUNS,
      );
    const ratio = (name: string, a: Result | undefined, b: Result | undefined, max: number) => {
      if (!a || !b) return;
      const value = a.wallMs / b.wallMs;
      const scope = commands === 1 ? layout : `${layout}, ${commands} commands`;
      lines.push(
        `target (${scope}): ${name} ≤ ${max}: ${(a.wallMs / 1000).toFixed(2)} s / ${(b.wallMs / 1000).toFixed(2)} s = ${value.toFixed(2)} ${verdict(value <= max)}`,
      );
    };
    ratio(
      `bubblewrap's ${RUNS}-run burst / process's`,
      of('bubblewrap'),
      of('process'),
      TARGET_BWRAP_PER_PROCESS_WALL,
    );
    ratio(
      `bubblewrap made by bwrap: its ${RUNS}-run burst / process's (the baseline)`,
      of('bubblewrap', undefined, 'bwrap'),
      of('process'),
      TARGET_BWRAP_PER_PROCESS_WALL,
    );
    ratio(
      `docker's (pool warm) ${RUNS}-run burst / bubblewrap's`,
      of('docker', true),
      of('bubblewrap'),
      TARGET_DOCKER_PER_BWRAP_WALL,
    );
  }
  for (const r of results) {
    // The targets are for runs of one command; other counts are compared by perCommand.
    const max = r.commands === 1 ? TARGET_CPU_PER_RUN_MS[r.backend] : null;
    const total = cpuPerRun(r);
    if (total !== null && max !== null) {
      const upkept = r.upkeep ? ", with the pool's upkeep" : '';
      const inContainers = containersPerRun(r);
      // A bubblewrap sandbox's processes are its children; a container's are in its own groups.
      const beside = inContainers
        ? ` (beside it, the containers' own processes ${ms(inContainers)}: ${ms(total + inContainers)} whole)`
        : '';
      lines.push(
        `target: ${configLabel(r)} CPU per run (service + children + daemons${upkept}) ≤ ${max} ms: ${ms(total)} ${verdict(total <= max)}${beside}`,
      );
    }
    if (r.backend !== 'process') {
      const p95 = percentile(r.listMs, 95);
      lines.push(
        `target: ${configLabel(r)} (${r.layout}) list p95 ≤ ${TARGET_LIST_P95_MS} ms: ${ms(p95)} ${verdict(p95 <= TARGET_LIST_P95_MS)}`,
      );
    }
  }
  return lines;
}

/**
 * With two command counts: what one more command costs, per configuration (the CPU per run's
 * difference over the commands' difference), and as a ratio to the process backend's.
 */
function perCommand(results: Result[]): string[] {
  if (COMMANDS.length < 2) return [];
  const [fewest, most] = [Math.min(...COMMANDS), Math.max(...COMMANDS)];
  const extraMs = (r: Result): number | null => {
    const at = (commands: number) =>
      results.find(
        (o) =>
          o.commands === commands &&
          o.backend === r.backend &&
          o.layout === r.layout &&
          o.pool === r.pool &&
          o.reuse === r.reuse &&
          o.maker === r.maker,
      );
    const [low, high] = [at(fewest), at(most)].map((o) => (o ? cpuPerRun(o) : null));
    return low == null || high == null ? null : (high - low) / (most - fewest);
  };
  const lines: string[] = [];
  for (const r of results.filter((o) => o.commands === fewest)) {
    const extra = extraMs(r);
    if (extra === null) continue;
    const process = results.find(
      (o) => o.commands === fewest && o.backend === 'process' && o.layout === r.layout,
    );
    const base = process ? extraMs(process) : null;
    const ratio =
      base && r.backend !== 'process' ? ` (${(extra / base).toFixed(2)} × process's)` : '';
    lines.push(
      `${backendLabel(r)} (${r.layout}): one more command ${ms(extra)} of CPU (runs of ${fewest} and ${most} commands)${ratio}`,
    );
  }
  return lines;
}

/**
 * A run's CPU (service, children and daemons): its share of the burst's, and with a pool its
 * share of the upkeep after it (its container made ahead and removed after: work the pool moves
 * out of the burst, not work saved). Null where not measured.
 */
function cpuPerRun(r: Result): number | null {
  if (!r.cpuSplit) return null;
  const upkeep = r.upkeep?.cpuSplit;
  if (r.upkeep && !upkeep) return null;
  return cpuTotal(r.cpuSplit, RUNS) + (upkeep ? cpuTotal(upkeep, RUNS) : 0);
}

/** The containers' own processes' CPU per run, burst and upkeep; null where none was measured. */
function containersPerRun(r: Result): number | null {
  const parts = [r.cpuSplit?.containers, r.upkeep?.cpuSplit?.containers];
  const ms = parts.reduce((sum, part) => sum + (part ? part.userMs + part.systemMs : 0), 0);
  return ms > 0 ? ms / RUNS : null;
}

function p50p95(values: number[]): string {
  return `${ms(percentile(values, 50))} / ${ms(percentile(values, 95))}`;
}

async function main(): Promise<void> {
  Logger.overrideLogger(['warn', 'error']);
  const facts = machineFacts();
  const model = await startModelServerProcess();
  const client = await startClient();
  const results: Result[] = [];
  try {
    for (const backend of BACKENDS) {
      const pools = backend === 'docker' ? DOCKER_POOLS.map((on) => (on ? RUNS : 0)) : [0];
      const makers: Maker[] = backend === 'bubblewrap' ? BUBBLEWRAP_MAKERS : ['spawner'];
      for (const [pool, maker] of pools.flatMap((p) => makers.map((m) => [p, m] as const))) {
        for (const reuse of pool > 0 ? DOCKER_REUSE : [false]) {
          for (const layout of LAYOUTS) {
            for (const commands of COMMANDS) {
              results.push(
                await measure({ backend, layout, pool, reuse, commands, maker }, model, client),
              );
            }
          }
        }
      }
    }
  } finally {
    client.close();
    model.close();
  }
  facts.push(`load average at end: ${loadAverage()}`);

  const idealMs = 2 * THINK_MS;
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
      "CPU per run: service + children + daemons (list sampling out; + the pool's upkeep)",
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
      cpuCell(r),
      r.neighbourCores === null ? 'n/a' : r.neighbourCores.toFixed(2),
      `${r.succeeded}/${RUNS}${r.ended < RUNS ? ` (${RUNS - r.ended} not ended)` : ''}`,
      r.poolFillMs === null
        ? '(no pool)'
        : `${(r.poolFillMs / 1000).toFixed(1)} s${r.poolFillLoopMaxMs === null ? '' : ` (${ms(r.poolFillLoopMaxMs)})`}; ${r.handouts ? describeHandouts(r.handouts) : '(worker in a child)'}`,
    ]);
  }
  const targets = ratioTargets(results);
  const failures = results.flatMap((r) =>
    r.failures.slice(0, 5).map((f) => `  ${configLabel(r)} (${r.layout}): ${f}`),
  );
  process.stdout.write(
    [
      '',
      'Ambient density benchmark',
      ...facts,
      `${RUNS} runs created at once (after ${WARM_UP_RUNS} warm-up runs); each: a model turn of ${THINK_MS} ms asking for ${COMMANDS.join(' or ')} command(s) (echo hi), then a turn of ${THINK_MS} ms that ends the run; AMBIENT_WORKER_CONCURRENCY=${RUNS}`,
      '',
      table(rows),
      '',
      ...results
        .filter((r) => r.cpuSplit)
        .map(
          (r) =>
            `${configLabel(r)}: ${describeCpuSplit(r.cpuSplit, RUNS, 'run')} ` +
            `(list samples: ${r.listMs.length}, ${ms(r.listCostMs ?? NaN)} of the service's CPU each, taken out; ` +
            `the bench client's own ${ms((r.clientCpu.userMs + r.clientCpu.systemMs) / RUNS)} and the model server's own ` +
            `${ms((r.modelCpu.userMs + r.modelCpu.systemMs) / RUNS)} per run not counted)`,
        ),
      ...results
        .filter((r) => r.stores)
        .map(
          (r) =>
            `${configLabel(r)}: beside it, MariaDB ${ms(r.stores!.databaseMs)} and Redis ${ms(r.stores!.redisMs)} per run ` +
            `(their whole CPU during the burst, the list samples' share taken out; not in the total: they serve every replica)`,
        ),
      ...results
        .filter((r) => r.upkeep)
        .map(
          (r) =>
            `${configLabel(r)}, the pool's upkeep after the burst (the containers ${describeReturns(r.upkeep!.returns)}; ${(r.upkeep!.wallMs / 1000).toFixed(1)} s): ` +
            `${describeCpuSplit(r.upkeep!.cpuSplit, RUNS, 'run')} (a removed container's shim is missed once it exited)`,
        ),
      ...perCommand(results),
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
