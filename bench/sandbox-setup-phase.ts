import { apiClient } from '../test/support/api-client';
import { createTestEnvironment, startTestApp, TestApp } from '../test/support/test-app';
import { waitFor } from '../test/support/wait';
import { closeOnExit } from './closing';
import type { ModelServerProcess } from './model-server-client';
import { ms, percentile } from './stats';
import { removeLeftContainers, removeSnapshotImages } from './warm-pool';

/**
 * `bench:sandbox`'s setup phase (issue #25, item 6): an environment whose setup takes 5 s
 * (`sleep 5`), per backend with environment snapshots on. Timed is POST /agent/runs → the result
 * of the run's first command reaching the model: for the first run of the environment (setup
 * runs, the snapshot is kept) and for the next runs (cached: `setup_cached`, no setup), beside a
 * run without an environment in the same app (the baseline).
 */

export interface SetupPhaseConfig {
  label: string;
  backend: 'process' | 'bubblewrap' | 'docker';
  poolSize: number;
}

export interface SetupPhaseResult {
  config: SetupPhaseConfig;
  baselineMs: number[];
  firstMs: number;
  nextMs: number[];
  /** How many of the next runs said `setup_cached`. */
  cachedCount: number;
}

export const SETUP_PHASE_CONFIGS: SetupPhaseConfig[] = [
  { label: 'bubblewrap', backend: 'bubblewrap', poolSize: 0 },
  { label: 'docker, pool on', backend: 'docker', poolSize: 2 },
];
const SETUP_COMMAND = 'sleep 5';
const NEXT_RUNS = 5;
const BASELINE_RUNS = 3;
/** Target: a cached environment's first command result, POST → result. */
export const TARGET_CACHED_FIRST_RESULT_MS = 500;
const TERMINAL = ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'];

async function timedRun(
  api: ReturnType<typeof apiClient>,
  model: ModelServerProcess,
  script: string,
  environmentId: string | null,
): Promise<{ firstResultMs: number; events: string[] }> {
  await model.script([
    [
      script,
      [
        { toolCalls: [{ name: 'run_command', arguments: { command: 'echo hi' } }] },
        { text: 'done' },
      ],
    ],
  ]);
  const sent = performance.timeOrigin + performance.now();
  const created = await api.post('/agent/runs', {
    prompt: `[script:${script}]`,
    ...(environmentId ? { config: { environment_id: environmentId } } : {}),
  });
  const runId = created.body.run_id as string;
  const result = await model.awaitRequest(script, 1, 120_000);
  await waitFor(
    async () => (await api.get(`/agent/runs/${runId}`)).body,
    (body) => TERMINAL.includes(body.state),
    { timeoutMs: 120_000, intervalMs: 5, what: `run ${runId}` },
  );
  const events = (await api.get(`/agent/runs/${runId}/timeline`)).body.events.map(
    (e: { event_type: string }) => e.event_type,
  );
  return { firstResultMs: result.receivedAt - sent, events };
}

export async function measureSetupPhase(
  config: SetupPhaseConfig,
  model: ModelServerProcess,
  settings: { image: string; log: (message: string) => void },
): Promise<SetupPhaseResult> {
  const env = createTestEnvironment(`bench_setup_${config.label.replace(/\W+/g, '_')}`, model.url);
  const overrides = {
    'sandbox.backend': config.backend,
    'sandbox.readonlyPaths': '',
    'sandbox.docker.defaultImage': settings.image,
    'sandbox.docker.poolSize': config.poolSize,
    'environments.snapshots.enabled': true,
  };
  let app: TestApp | undefined;
  const close = async () => {
    await app?.close();
    if (config.backend === 'docker') {
      const docker = env.config(['api', 'worker'], overrides);
      const left = await removeLeftContainers(docker);
      // After the containers: an image a container still uses cannot be removed.
      const images = await removeSnapshotImages(docker);
      if (left + images > 0) {
        settings.log(
          `setup phase, ${config.label}: removed ${left} containers and ${images} snapshot images`,
        );
      }
    }
    await env.destroy();
  };
  const release = closeOnExit(close);
  const name = config.label.replace(/\W+/g, '-');
  try {
    app = await startTestApp(env, ['api', 'worker'], overrides);
    const api = apiClient(app.baseUrl, app.apiKey);
    settings.log(`setup phase, ${config.label}: baseline runs without an environment`);
    const baselineMs: number[] = [];
    // One warm-up (first harness start, image and pool), then the baseline.
    for (let i = 0; i <= BASELINE_RUNS; i++) {
      const run = await timedRun(api, model, `setup-base-${name}-${i}`, null);
      if (i > 0) baselineMs.push(run.firstResultMs);
    }
    const environment = await api.post('/agent/environments', {
      name: `bench-${name}`,
      setup_commands: [SETUP_COMMAND],
    });
    const uid = environment.body.uid as string;
    settings.log(`setup phase, ${config.label}: first run of the environment (sets up)`);
    const first = await timedRun(api, model, `setup-first-${name}`, uid);
    settings.log(`setup phase, ${config.label}: ${NEXT_RUNS} next runs`);
    const nextMs: number[] = [];
    let cachedCount = 0;
    for (let i = 0; i < NEXT_RUNS; i++) {
      const run = await timedRun(api, model, `setup-next-${name}-${i}`, uid);
      nextMs.push(run.firstResultMs);
      if (run.events.includes('setup_cached')) cachedCount++;
    }
    return { config, baselineMs, firstMs: first.firstResultMs, nextMs, cachedCount };
  } finally {
    release();
    await close();
  }
}

/** Header and one row per backend, for bench:sandbox's report. */
export function setupPhaseRows(results: SetupPhaseResult[]): string[][] {
  const rows = [
    [
      `Sandbox (setup: ${SETUP_COMMAND})`,
      'no environment p50 (baseline)',
      'first run (sets up)',
      `next ${NEXT_RUNS} runs p50 / max`,
      'next p50 − baseline p50',
      'setup_cached',
      `target next p50 ≤ ${TARGET_CACHED_FIRST_RESULT_MS} ms`,
    ],
  ];
  for (const r of results) {
    const next = percentile(r.nextMs, 50);
    rows.push([
      r.config.label,
      ms(percentile(r.baselineMs, 50)),
      ms(r.firstMs),
      `${ms(next)} / ${ms(Math.max(...r.nextMs))}`,
      ms(next - percentile(r.baselineMs, 50)),
      `${r.cachedCount}/${r.nextMs.length}`,
      next <= TARGET_CACHED_FIRST_RESULT_MS ? 'met' : 'MISSED',
    ]);
  }
  return rows;
}
