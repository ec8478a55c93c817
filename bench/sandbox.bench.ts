import { Logger } from '@nestjs/common';
import { execFile } from 'node:child_process';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { FakeModelServer, startFakeModelServer } from '../test/fixtures/fake-model-server';
import { apiClient } from '../test/support/api-client';
import { createTestEnvironment, startTestApp } from '../test/support/test-app';
import { waitFor } from '../test/support/wait';
import { ms, percentile, table } from './stats';

/**
 * `npm run bench:sandbox`: what a sandbox costs a run. Per backend (process, bubblewrap, docker; one
 * API + worker process each, in this order, in the same run): QUEUED → first model request over
 * sequential runs, and 20 concurrent runs each running a command (all must succeed). A benchmark,
 * not a test: a missed target is reported as MISSED and the process still exits 0.
 */

const BACKENDS = ['process', 'bubblewrap', 'docker'] as const;
type Backend = (typeof BACKENDS)[number];
const SEQUENTIAL_RUNS = 30;
const WARM_UP_RUNS = 3;
const CONCURRENT_RUNS = 20;
/** Added over the `process` backend at p50. */
const TARGET_ADDED_P50_MS: Record<Backend, number | null> = {
  process: null,
  bubblewrap: 20,
  docker: 400,
};
const IMAGE = 'ambient-agent:bookworm';

interface BackendResult {
  backend: Backend;
  firstRequestMs: number[];
  concurrent: { succeeded: number; wallMs: number; failures: string[] };
}

function progress(message: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

async function measure(backend: Backend, model: FakeModelServer): Promise<BackendResult> {
  const env = createTestEnvironment(`bench_sandbox_${backend}`, model.url);
  const app = await startTestApp(env, ['api', 'worker'], {
    'sandbox.backend': backend,
    'sandbox.readonlyPaths': '',
    'sandbox.docker.defaultImage': IMAGE,
    'runs.workerConcurrency': CONCURRENT_RUNS,
  });
  const api = apiClient(app.baseUrl, app.apiKey);
  const ended = (runId: string) =>
    waitFor(
      async () => (await api.get(`/agent/runs/${runId}`)).body,
      (run) => ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(run.state),
      { timeoutMs: 120_000, intervalMs: 20, what: `run ${runId}` },
    );
  try {
    const firstRequestMs: number[] = [];
    for (let i = 0; i < WARM_UP_RUNS + SEQUENTIAL_RUNS; i++) {
      const script = `first-${backend}-${i}`;
      model.script(script, [{ text: 'hello' }]);
      const sent = performance.now();
      const created = await api.post('/agent/runs', { prompt: `[script:${script}]` });
      const first = await waitFor(
        async () => model.requests.find((r) => r.script === script),
        Boolean,
        { timeoutMs: 60_000, intervalMs: 2, what: 'the first model request' },
      );
      await ended(created.body.run_id);
      if (i >= WARM_UP_RUNS) firstRequestMs.push(first!.receivedAt - sent);
    }
    progress(`${backend}: ${CONCURRENT_RUNS} concurrent runs with a command each`);
    const started = performance.now();
    const runs = await Promise.all(
      Array.from({ length: CONCURRENT_RUNS }, async (_, i) => {
        const script = `concurrent-${backend}-${i}`;
        model.script(script, [
          {
            toolCalls: [
              {
                name: 'run_command',
                arguments: { command: `echo run-${i} > out.txt; cat out.txt` },
              },
            ],
          },
          { text: 'done' },
        ]);
        const created = await api.post('/agent/runs', { prompt: `[script:${script}]` });
        return ended(created.body.run_id);
      }),
    );
    const wallMs = performance.now() - started;
    const failures = runs
      .filter((run) => run.state !== 'SUCCEEDED')
      .map((run) => `${run.state}: ${run.status_message?.message ?? ''}`);
    return {
      backend,
      firstRequestMs,
      concurrent: { succeeded: runs.length - failures.length, wallMs, failures },
    };
  } finally {
    await app.close();
    await env.destroy();
  }
}

async function main(): Promise<void> {
  Logger.overrideLogger(['warn', 'error']);
  const facts = [
    `date: ${new Date().toISOString()}`,
    `cpus: ${availableParallelism()} × ${cpus()[0]?.model ?? 'unknown'}`,
    `load average at start: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  ];
  const build = resolve(__dirname, '..', 'sandbox', 'agent-image', 'build-image.sh');
  await promisify(execFile)(build, ['--tag', IMAGE], { maxBuffer: 16 << 20 });
  const model = await startFakeModelServer();
  const results: BackendResult[] = [];
  try {
    for (const backend of BACKENDS) {
      progress(`${backend}: ${SEQUENTIAL_RUNS} sequential runs`);
      results.push(await measure(backend, model));
    }
  } finally {
    await model.close();
  }
  const baseline = percentile(results[0].firstRequestMs, 50);
  const rows = [
    [
      'Backend',
      'QUEUED→first model request p50 / p99',
      'Added p50',
      'Target',
      'Status',
      `${CONCURRENT_RUNS} concurrent runs`,
    ],
  ];
  for (const r of results) {
    const p50 = percentile(r.firstRequestMs, 50);
    const target = TARGET_ADDED_P50_MS[r.backend];
    const added = p50 - baseline;
    rows.push([
      r.backend,
      `${ms(p50)} / ${ms(percentile(r.firstRequestMs, 99))}`,
      r.backend === 'process' ? 'baseline' : ms(added),
      target === null ? '' : `≤ ${target} ms`,
      target === null ? '' : added <= target ? 'met' : 'MISSED',
      `${r.concurrent.succeeded}/${CONCURRENT_RUNS} succeeded in ${(r.concurrent.wallMs / 1000).toFixed(1)} s`,
    ]);
  }
  const failures = results.flatMap((r) => r.concurrent.failures.map((f) => `  ${r.backend}: ${f}`));
  process.stdout.write(
    [
      '',
      'Ambient sandbox benchmark',
      ...facts,
      `${SEQUENTIAL_RUNS} sequential runs per backend after ${WARM_UP_RUNS} warm-up runs; one API + worker process per backend`,
      '',
      table(rows),
      ...(failures.length ? ['', 'Failed concurrent runs:', ...failures] : []),
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
