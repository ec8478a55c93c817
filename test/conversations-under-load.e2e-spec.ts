import { ChildProcess, spawn } from 'node:child_process';
import { cpus } from 'node:os';
import { FakeModelServer, startFakeModelServer } from './fixtures/fake-model-server';
import { apiClient } from './support/api-client';
import { createTestEnvironment, startTestApp, TestApp, TestEnvironment } from './support/test-app';
import { waitFor } from './support/wait';
import { waitForExit } from './support/worker-process';

const ROUNDS = 20;
/** Runs in flight at once (the test worker's concurrency), so executions overlap as in production. */
const PARALLEL = 4;
/**
 * A lease a live worker renews under this load. The suite's 1.5 s lease (for recovery tests) is
 * shorter than the pauses measured here (renewals 1.1–1.4 s apart with every core busy): a live
 * execution then stops itself and the run is retried (fenced, so never interleaved), which is
 * recovery, not the conversation this test checks.
 */
const LEASE_MS = 10_000;
/** The test's own limit; the load outlasts it, so a slow but correct pass still ran under load. */
const TEST_TIMEOUT_MS = 180_000;
/** The busy processes stop by themselves after this, whatever happens to the test. */
const LOAD_SECONDS = TEST_TIMEOUT_MS / 1000 + 10;

/**
 * The conversation scenario of conversations.e2e-spec.ts, 20 times, while busy processes load
 * every core (a `stress`-like load the test starts and stops): each run's transcript must be
 * exactly its one execution's six messages. Two executions writing into one run (a takeover of a
 * live execution that kept writing) showed as extra, interleaved lines.
 */
describe('conversations under CPU load (api + worker, fake model server)', () => {
  let model: FakeModelServer;
  let env: TestEnvironment;
  let app: TestApp;
  let api: ReturnType<typeof apiClient>;
  const load: ChildProcess[] = [];

  beforeAll(async () => {
    model = await startFakeModelServer();
    env = createTestEnvironment('conv-load', model.url);
    app = await startTestApp(env, ['api', 'worker'], { 'runs.leaseMs': LEASE_MS });
    api = apiClient(app.baseUrl, app.apiKey);
  });

  afterAll(async () => {
    await stopLoad(load);
    await app?.close();
    await env?.destroy();
    await model?.close();
  });

  const finished = (runId: string) =>
    waitFor(
      async () => (await api.get(`/agent/runs/${runId}`)).body,
      (run) => ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(run.state),
      { what: `run ${runId} to finish`, timeoutMs: 60_000 },
    );

  async function conversation(round: number): Promise<void> {
    const script = `conv-${round}`;
    model.script(script, [
      { toolCalls: [{ name: 'run_command', arguments: { command: 'echo hello && exit 3' } }] },
      { toolCalls: [{ name: 'run_command', arguments: { command: 'echo fixed' } }] },
      { text: `All done (${round}).` },
    ]);
    const runId = (await api.post('/agent/runs', { prompt: `Say hello [script:${script}]` })).body
      .run_id as string;
    const run = await finished(runId);
    expect({ round, state: run.state, status: run.status_message }).toEqual({
      round,
      state: 'SUCCEEDED',
      status: { message: `All done (${round}).` },
    });
    const lines = (await api.transcriptText(runId))
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as {
            run_id: string;
            execution_id: number;
            message: { role: string; content?: unknown };
          },
      );
    expect({ round, lines: lines.map((l) => [l.execution_id, l.message.role]) }).toEqual({
      round,
      lines: [
        [1, 'user'],
        [1, 'assistant'],
        [1, 'tool'],
        [1, 'assistant'],
        [1, 'tool'],
        [1, 'assistant'],
      ],
    });
    expect(lines.every((l) => l.run_id === runId)).toBe(true);
    expect(lines[5].message.content).toBe(`All done (${round}).`);
  }

  it(
    `keeps every transcript exact over ${ROUNDS} conversations while the CPU is loaded`,
    async () => {
      load.push(...startLoad(cpus().length));
      const started = Date.now();
      for (let round = 0; round < ROUNDS; round += PARALLEL) {
        const batch = Array.from(
          { length: Math.min(PARALLEL, ROUNDS - round) },
          (_, i) => round + i,
        );
        await Promise.all(batch.map((r) => conversation(r)));
      }
      expect(load.every((p) => p.exitCode === null && p.signalCode === null)).toBe(true);
      await stopLoad(load);
      console.log(`${ROUNDS} conversations under load in ${Date.now() - started} ms`);
    },
    TEST_TIMEOUT_MS,
  );
});

/** One busy process per core, each ending itself after LOAD_SECONDS (one process: kill ends it). */
function startLoad(count: number): ChildProcess[] {
  const spin = `const end = Date.now() + ${LOAD_SECONDS * 1000}; while (Date.now() < end) {}`;
  return Array.from({ length: count }, () =>
    spawn(process.execPath, ['-e', spin], { stdio: 'ignore' }),
  );
}

async function stopLoad(processes: ChildProcess[]): Promise<void> {
  for (const p of processes.splice(0)) {
    p.kill('SIGKILL');
    await waitForExit(p);
  }
}
