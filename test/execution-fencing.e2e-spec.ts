import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { scrape } from './support/prometheus';
import { TAKEOVER_LEASE_MS } from './support/test-app';
import { useTestApp } from './support/use-test-app';
import { waitFor } from './support/wait';
import { spawnAmbient, waitForExit } from './support/worker-process';

/** How long the fake model holds each reply: the frozen worker's lease (1.5 s) lapses meanwhile. */
const HOLD_MS = 4000;

type Worker = ReturnType<typeof spawnAmbient>;
type TimelineEvent = { event_type: string; execution_id: number; occurred_at: string };

/**
 * Two worker processes on one run: the one executing it is frozen (SIGSTOP) while the fake model
 * holds its request, past its lease; the other takes the run over and finishes it; then the first
 * is resumed (SIGCONT) with the model's reply waiting for it. Nothing it does afterwards may show
 * in the run, and the run's one command runs once.
 */
describe('fenced executions (worker processes, SIGSTOP past the lease)', () => {
  const workers: Worker[] = [];

  const startWorker = async (): Promise<Worker> => {
    // Each worker serves its own metrics, so the frozen one's counter can be read.
    const worker = spawnAmbient(
      env.childEnv({
        AMBIENT_ROLES: 'worker',
        AMBIENT_HOST: '127.0.0.1',
        AMBIENT_METRICS_PORT: '0',
      }),
    );
    workers.push(worker);
    await worker.ready;
    return worker;
  };
  const metricsUrl = (worker: Worker) => /metrics on (http:\/\/[^\s";]+)/.exec(worker.output())![1];

  afterAll(async () => {
    for (const worker of workers.splice(0)) {
      worker.child.kill('SIGCONT');
      worker.child.kill('SIGKILL');
      await waitForExit(worker.child);
    }
  });

  const { model, env, api } = useTestApp('fencing', ['api'], {}, { leaseMs: TAKEOVER_LEASE_MS });

  /** Everything a user sees of the run. */
  const snapshot = async (runId: string) => ({
    run: (await api.get(`/agent/runs/${runId}`)).body,
    conversation: (await api.get(`/agent/runs/${runId}/conversation`)).body,
    timeline: (await api.get(`/agent/runs/${runId}/timeline`)).body,
  });

  it('refuses everything the stale execution writes after another worker took the run over', async () => {
    model.script('fenced', [
      {
        delayMs: HOLD_MS,
        then: {
          toolCalls: [{ name: 'run_command', arguments: { command: 'echo ran >> ran.txt' } }],
        },
      },
      { text: 'finished by the worker that took over' },
    ]);
    const pair = await Promise.all([startWorker(), startWorker()]);
    const runId = (await api.post('/agent/runs', { prompt: 'Count once [script:fenced]' })).body
      .run_id as string;

    // The executing worker sent its model request: freeze it while the reply is held.
    await waitFor(
      async () => model.requests.filter((r) => r.script === 'fenced').length,
      (n) => n === 1,
      { what: 'the first model request' },
    );
    const claims = async () =>
      ((await api.get(`/agent/runs/${runId}/timeline`)).body.events as TimelineEvent[]).filter(
        (e) => e.event_type === 'oz_run_claimed',
      );
    const [firstClaim] = (await claims()) as (TimelineEvent & { payload: { worker_id: string } })[];
    const holderPid = Number(firstClaim.payload.worker_id.split(':').at(-2));
    const stale = pair.find((w) => w.child.pid === holderPid)!;
    const other = pair.find((w) => w !== stale)!;
    expect(stale).toBeDefined();
    const frozenAt = Date.now();
    stale.child.kill('SIGSTOP');

    const finished = await waitFor(
      async () => (await api.get(`/agent/runs/${runId}`)).body,
      (run) => run.state === 'SUCCEEDED',
      { what: 'the other worker to finish the run', timeoutMs: 60_000 },
    );
    expect(finished.status_message.message).toBe('finished by the worker that took over');
    const secondClaim = (await claims())[1];
    expect(secondClaim.execution_id).toBe(2);
    const takeoverMs = Date.parse(secondClaim.occurred_at) - frozenAt;
    const before = await snapshot(runId);
    const modelRequests = model.requests.filter((r) => r.script === 'fenced').length;
    const ranFile = join(env.workspaceRoot, runId, 'ran.txt');
    expect(readFileSync(ranFile, 'utf8')).toBe('ran\n');

    // Resume the frozen worker: the model's tool call is waiting in its socket.
    const staleBefore = (await scrape(metricsUrl(other))).value(
      'ambient_stale_execution_writes_total',
    );
    stale.child.kill('SIGCONT');
    await waitFor(
      async () => stale.output(),
      (out) => out.includes(`run ${runId}: execution 1 stopped`),
      { what: 'the resumed worker to stop its stale execution', timeoutMs: 30_000 },
    );
    const refused = await scrape(metricsUrl(stale));
    expect(refused.value('ambient_stale_execution_writes_total')).toBeGreaterThan(0);
    expect(stale.output()).toContain(`execution 1 of run ${runId} no longer holds the run`);
    // Only the stale worker refused anything.
    expect((await scrape(metricsUrl(other))).value('ambient_stale_execution_writes_total')).toBe(
      staleBefore,
    );

    // Nothing changed: state, usage, conversation, timeline, artifacts; one command, once.
    expect(await snapshot(runId)).toEqual(before);
    expect(readFileSync(ranFile, 'utf8')).toBe('ran\n');
    expect(model.requests.filter((r) => r.script === 'fenced')).toHaveLength(modelRequests);
    const messages = before.conversation.steps.flatMap(
      (step: { messages: { role: string }[] }) => step.messages,
    );
    expect(messages.filter((m: { role: string }) => m.role === 'tool')).toHaveLength(1);
    console.log(
      `fencing: takeover ${takeoverMs} ms after SIGSTOP (lease 1500 ms); stale writes refused: ${refused.text
        .split('\n')
        .filter((l) => l.startsWith('ambient_stale_execution_writes_total{'))
        .join(', ')}`,
    );
  });
});
