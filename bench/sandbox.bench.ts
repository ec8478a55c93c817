import { Logger } from '@nestjs/common';
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { apiClient } from '../test/support/api-client';
import { createTestEnvironment, startTestApp, TestApp } from '../test/support/test-app';
import { waitFor } from '../test/support/wait';
import {
  describeHandouts,
  handoutStats,
  poolFilled,
  removeLeftContainers,
  warmPoolOf,
  type Handouts,
} from './warm-pool';
import { closeOnExit } from './closing';
import { CpuSplit, describeCpuSplit, watchCpuSplit } from './cpu-split';
import { loadAverage, machineFacts } from './machine';
import { ModelServerProcess, startModelServerProcess } from './model-server-client';
import { ms, percentile, table } from './stats';
import { measureSetupPhase, SETUP_PHASE_CONFIGS, setupPhaseRows } from './sandbox-setup-phase';

/**
 * `npm run bench:sandbox`: what a user waits for, per sandbox backend (process, bubblewrap, docker
 * without and with the warm pool; one API + worker process each, in this order, in the same run).
 * Each run's model asks for one command: measured are POST /agent/runs → the command's result
 * reaching the model (the fake model server receives the tool result) and → the run's end, over
 * sequential runs and over 20 concurrent runs. Also reported: POST → first model request (queue,
 * dispatch, sandbox open) and first model request → tool result (the command itself: exec in the
 * container), and the sandbox hand-out latency from ambient_sandbox_handout_seconds. A benchmark,
 * not a test: a missed target is reported as MISSED and the process still exits 0.
 * The setup phase (sandbox-setup-phase.ts) times an environment with a 5 s setup, first run vs
 * cached runs. BENCH_SANDBOX_PHASES=runs,setup (the default) selects phases.
 */

interface Config {
  label: string;
  backend: 'process' | 'bubblewrap' | 'docker';
  poolSize: number;
  /** docker: commands through the container's launcher (AMBIENT_DOCKER_LAUNCHER); default on. */
  launcher?: boolean;
  /** docker with a pool: closed sandboxes' containers back in it (AMBIENT_DOCKER_POOL_REUSE); default on. */
  reuse?: boolean;
}

/**
 * BENCH_SANDBOX_CONFIGS (comma-separated label prefixes, e.g. `process,docker`) runs only
 * those configurations (of both phases). A comma followed by a space belongs to a label, so one
 * configuration can be named whole: `bubblewrap,docker, pool on (launcher)`.
 */
function selected(config: { label: string }): boolean {
  const prefixes = process.env.BENCH_SANDBOX_CONFIGS?.split(/,(?! )/).map((s) => s.trim());
  return !prefixes?.length || prefixes.some((prefix) => config.label.startsWith(prefix));
}

const CONFIGS: Config[] = (
  [
    { label: 'process', backend: 'process', poolSize: 0 },
    { label: 'bubblewrap', backend: 'bubblewrap', poolSize: 0 },
    { label: 'docker, pool off', backend: 'docker', poolSize: 0 },
    { label: 'docker, pool on, docker exec', backend: 'docker', poolSize: 2, launcher: false },
    { label: 'docker, pool on (launcher)', backend: 'docker', poolSize: 2 },
    { label: 'docker, pool on (launcher), no reuse', backend: 'docker', poolSize: 2, reuse: false },
  ] as Config[]
).filter(selected);
const SEQUENTIAL_RUNS = 30;
const WARM_UP_RUNS = 3;
const CONCURRENT_RUNS = 20;
const POOL_MAX = CONCURRENT_RUNS;
/**
 * Targets of the warm pool (docker, pool on), as ratios to bubblewrap's figures of the same run
 * (the machine's speed and load cancel out). The CPU per run is bench:density's target: here the
 * bench polls each run from this process, and that polling is in the service's figure.
 */
const TARGET_FIRST_RESULT_P50_PER_BWRAP = 2;
const TARGET_CONCURRENT_WALL_PER_BWRAP = 1.5;
const IMAGE = 'ambient-agent:bookworm';
const TERMINAL = ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'];

interface RunTimes {
  /** POST → the first model request. */
  firstRequestMs: number;
  /** First model request → the tool result reaching the model. */
  commandMs: number;
  /** POST → the tool result reaching the model. */
  firstResultMs: number;
  /** POST → the run's terminal state seen through the API. */
  endMs: number;
  state: string;
  message: string;
}

interface Result {
  config: Config;
  sequential: RunTimes[];
  concurrent: RunTimes[];
  concurrentWallMs: number;
  /** Mean hand-out latency (ms) and count, by result, over the whole configuration. */
  handouts: Handouts;
  /** The same during the concurrent burst only: a miss's mean is what a run waited for its container. */
  burstHandouts: Handouts;
  /** CPU used during the concurrent burst, by the service, its children and the docker daemons. */
  burstCpu: CpuSplit | null;
}

function progress(message: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

/** One run whose model asks for one command, timed from its POST. */
async function timedRun(
  api: ReturnType<typeof apiClient>,
  model: ModelServerProcess,
  script: string,
): Promise<RunTimes> {
  const command = 'echo hi > out.txt; cat out.txt';
  await model.script([
    [script, [{ toolCalls: [{ name: 'run_command', arguments: { command } }] }, { text: 'done' }]],
  ]);
  // The model server's times are since the epoch (it is another process).
  const sent = performance.timeOrigin + performance.now();
  const created = await api.post('/agent/runs', { prompt: `[script:${script}]` });
  const runId = created.body.run_id as string;
  const result = await model.awaitRequest(script, 1, 120_000);
  const run = await waitFor(
    async () => (await api.get(`/agent/runs/${runId}`)).body,
    (body) => TERMINAL.includes(body.state),
    { timeoutMs: 120_000, intervalMs: 5, what: `run ${runId}` },
  );
  const endMs = performance.timeOrigin + performance.now() - sent;
  const first = await model.awaitRequest(script, 0, 0);
  return {
    firstRequestMs: first.receivedAt - sent,
    commandMs: result.receivedAt - first.receivedAt,
    firstResultMs: result.receivedAt - sent,
    endMs,
    state: run.state as string,
    message: (run.status_message?.message as string | undefined) ?? '',
  };
}

async function measure(config: Config, model: ModelServerProcess): Promise<Result> {
  const env = createTestEnvironment(
    `bench_sandbox_${config.label.replace(/\W+/g, '_')}`,
    model.url,
  );
  const overrides = {
    'sandbox.backend': config.backend,
    'sandbox.readonlyPaths': '',
    'sandbox.docker.defaultImage': IMAGE,
    'sandbox.docker.poolSize': config.poolSize,
    'sandbox.docker.poolMax': POOL_MAX,
    'sandbox.docker.launcher': config.launcher ?? true,
    'sandbox.docker.poolReuse': config.reuse ?? true,
    'runs.workerConcurrency': CONCURRENT_RUNS,
  };
  let app: TestApp | undefined;
  const close = async () => {
    await app?.close();
    if (config.backend === 'docker') {
      const left = await removeLeftContainers(env.config(['api', 'worker'], overrides));
      if (left > 0) progress(`${config.label}: removed ${left} containers its closed app left`);
    }
    await env.destroy();
  };
  const release = closeOnExit(close);
  const name = config.label.replace(/\W+/g, '-');
  try {
    app = await startTestApp(env, ['api', 'worker'], overrides);
    const api = apiClient(app.baseUrl, app.apiKey);
    progress(`${config.label}: ${SEQUENTIAL_RUNS} sequential runs`);
    const sequential: RunTimes[] = [];
    for (let i = 0; i < WARM_UP_RUNS + SEQUENTIAL_RUNS; i++) {
      const times = await timedRun(api, model, `seq-${name}-${i}`);
      if (i >= WARM_UP_RUNS) sequential.push(times);
    }
    if (config.poolSize > 0) {
      // The pool learns the burst size from one burst, then refills to it.
      progress(`${config.label}: a warm-up burst of ${CONCURRENT_RUNS}, then the pool refills`);
      await Promise.all(
        Array.from({ length: CONCURRENT_RUNS }, (_, i) =>
          timedRun(api, model, `warm-${name}-${i}`),
        ),
      );
      const pool = await warmPoolOf(app);
      if (!pool) throw new Error('the docker backend has no warm pool');
      await poolFilled(pool, IMAGE, CONCURRENT_RUNS, 180_000);
    }
    progress(`${config.label}: ${CONCURRENT_RUNS} concurrent runs`);
    const handoutsBefore = await handoutStats(app.ambient.metrics);
    // The model server is the bench's (a child of this process), not the service's.
    const cpuUsed = watchCpuSplit([model.pid]);
    const started = performance.now();
    const concurrent = await Promise.all(
      Array.from({ length: CONCURRENT_RUNS }, (_, i) => timedRun(api, model, `conc-${name}-${i}`)),
    );
    const concurrentWallMs = performance.now() - started;
    const burstCpu = cpuUsed();
    return {
      config,
      sequential,
      concurrent,
      concurrentWallMs,
      handouts: await handoutStats(app.ambient.metrics),
      burstHandouts: await handoutStats(app.ambient.metrics, handoutsBefore),
      burstCpu,
    };
  } finally {
    release();
    await close();
  }
}

/** The targets: docker (pool on, launcher) against bubblewrap in this run. */
function sandboxTargets(results: Result[]): string[] {
  const verdict = (ok: boolean): string => (ok ? 'met' : 'MISSED');
  const lines: string[] = [];
  const bwrap = results.find((r) => r.config.backend === 'bubblewrap');
  const pooled = results.find(
    (r) => r.config.backend === 'docker' && r.config.poolSize > 0 && r.config.launcher !== false,
  );
  if (bwrap && pooled) {
    const p50 = (r: Result) =>
      percentile(
        r.sequential.map((t) => t.firstResultMs),
        50,
      );
    const first = p50(pooled) / p50(bwrap);
    lines.push(
      `target: docker (pool on) POST→command result p50 ≤ ${TARGET_FIRST_RESULT_P50_PER_BWRAP} × bubblewrap's: ${ms(p50(pooled))} / ${ms(p50(bwrap))} = ${first.toFixed(2)} ${verdict(first <= TARGET_FIRST_RESULT_P50_PER_BWRAP)}`,
    );
    const wall = pooled.concurrentWallMs / bwrap.concurrentWallMs;
    lines.push(
      `target: docker (pool on) ${CONCURRENT_RUNS} concurrent runs ≤ ${TARGET_CONCURRENT_WALL_PER_BWRAP} × bubblewrap's: ${(pooled.concurrentWallMs / 1000).toFixed(2)} s / ${(bwrap.concurrentWallMs / 1000).toFixed(2)} s = ${wall.toFixed(2)} ${verdict(wall <= TARGET_CONCURRENT_WALL_PER_BWRAP)}`,
    );
  }
  return lines;
}

function p50p99(values: number[]): string {
  return `${ms(percentile(values, 50))} / ${ms(percentile(values, 99))}`;
}

async function main(): Promise<void> {
  Logger.overrideLogger(['warn', 'error']);
  const facts = machineFacts();
  const build = resolve(__dirname, '..', 'sandbox', 'agent-image', 'build-image.sh');
  await promisify(execFile)(build, ['--tag', IMAGE], { maxBuffer: 16 << 20 });
  const model = await startModelServerProcess();
  const results: Result[] = [];
  const phases = new Set((process.env.BENCH_SANDBOX_PHASES ?? 'runs,setup').split(','));
  const setupResults = [];
  try {
    if (phases.has('runs')) {
      for (const config of CONFIGS) results.push(await measure(config, model));
    }
    if (phases.has('setup')) {
      for (const config of SETUP_PHASE_CONFIGS.filter(selected)) {
        setupResults.push(await measureSetupPhase(config, model, { image: IMAGE, log: progress }));
      }
    }
  } finally {
    model.close();
  }
  if (setupResults.length) {
    process.stdout.write(
      ['', 'Setup phase', ...facts, '', table(setupPhaseRows(setupResults)), ''].join('\n'),
    );
  }
  if (!results.length) return;

  const sequentialRows = [
    [
      'Sandbox',
      'POST→command result p50 / p99',
      'POST→run end p50 / p99',
      'POST→1st model request p50',
      'command (model→result) p50',
      'hand-out (mean, count)',
    ],
  ];
  const concurrentRows = [
    [
      'Sandbox',
      `${CONCURRENT_RUNS} concurrent: all ended`,
      'POST→command result p50 / max',
      'succeeded',
      'hand-outs in the burst (mean, count)',
    ],
  ];
  const cpuLines: string[] = [];
  for (const r of results) {
    const seq = r.sequential;
    sequentialRows.push([
      r.config.label,
      p50p99(seq.map((t) => t.firstResultMs)),
      p50p99(seq.map((t) => t.endMs)),
      ms(
        percentile(
          seq.map((t) => t.firstRequestMs),
          50,
        ),
      ),
      ms(
        percentile(
          seq.map((t) => t.commandMs),
          50,
        ),
      ),
      Object.entries(r.handouts)
        .map(([result, s]) => `${result} ${ms(s.meanMs)} ×${s.count}`)
        .join(', '),
    ]);
    const conc = r.concurrent.map((t) => t.firstResultMs);
    concurrentRows.push([
      r.config.label,
      `${(r.concurrentWallMs / 1000).toFixed(2)} s`,
      `${ms(percentile(conc, 50))} / ${ms(Math.max(...conc))}`,
      `${r.concurrent.filter((t) => t.state === 'SUCCEEDED').length}/${CONCURRENT_RUNS}`,
      describeHandouts(r.burstHandouts),
    ]);
    cpuLines.push(
      `${r.config.label}, the burst (the bench's own polling of each run included in the service's; the model server's not): ${describeCpuSplit(r.burstCpu, CONCURRENT_RUNS, 'run')}`,
    );
  }
  const targets = sandboxTargets(results);
  facts.push(`load average at end: ${loadAverage()}`);
  const failures = results.flatMap((r) =>
    [...r.sequential, ...r.concurrent]
      .filter((t) => t.state !== 'SUCCEEDED')
      .map((t) => `  ${r.config.label}: ${t.state}: ${t.message}`),
  );
  process.stdout.write(
    [
      '',
      'Ambient sandbox benchmark',
      ...facts,
      `${SEQUENTIAL_RUNS} sequential runs per configuration after ${WARM_UP_RUNS} warm-up runs, then ${CONCURRENT_RUNS} concurrent; one command per run; one API + worker process per configuration`,
      `docker, pool on: AMBIENT_DOCKER_POOL_SIZE=2, AMBIENT_DOCKER_POOL_MAX=${POOL_MAX}; the concurrent burst follows a warm-up burst and the pool's refill`,
      '',
      table(sequentialRows),
      '',
      table(concurrentRows),
      '',
      ...cpuLines,
      '',
      ...targets,
      ...(failures.length ? ['', 'Runs that did not succeed:', ...failures] : []),
      '',
    ].join('\n'),
  );
}

main().then(
  () => process.exit(0),
  (err: Error) => {
    process.stderr.write(`bench:sandbox failed: ${err.stack ?? err.message}\n`);
    process.exit(1);
  },
);
