import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeModelServer, startFakeModelServer } from './fixtures/fake-model-server';
import { apiClient } from './support/api-client';
import { scrape } from './support/prometheus';
import { SelfHostedWorkers } from './support/self-hosted-worker-process';
import {
  createTestEnvironment,
  startTestApp,
  TestApp,
  TestEnvironment,
  TAKEOVER_LEASE_MS,
} from './support/test-app';
import { waitFor } from './support/wait';
import { waitForExit } from './support/worker-process';

/**
 * Ambient's own self-hosted worker program, as real child processes, against two API replicas
 * on one database and Redis: runs routed by `config.worker_host` are executed on the worker's
 * machine and reported back through the run-scoped API.
 */
describe('self-hosted workers (real worker processes, two API replicas)', () => {
  let model: FakeModelServer;
  let env: TestEnvironment;
  let appA: TestApp;
  let appB: TestApp;
  let apiA: ReturnType<typeof apiClient>;
  let apiB: ReturnType<typeof apiClient>;
  let workerRoot: string;
  const workers = new SelfHostedWorkers();

  const startWorker = (workerId: string, extra: string[] = []) =>
    workers.start({
      apiUrl: appA.baseUrl,
      workerId,
      workspaceRoot: workerRoot,
      modelsFile: env.modelsFile,
      extra,
    });
  const run = (runId: string) => apiA.get(`/agent/runs/${runId}`).then((r) => r.body);
  const runUntil = (runId: string, states: string[], what = `run ${runId} in ${states}`) =>
    waitFor(
      () => run(runId),
      (r) => states.includes(r.state),
      { what },
    );
  const createOn = async (
    api: ReturnType<typeof apiClient>,
    workerHost: string,
    prompt: string,
  ): Promise<string> => {
    const created = await api.post('/agent/runs', { prompt, config: { worker_host: workerHost } });
    expect(created.status).toBe(200);
    return created.body.run_id;
  };
  const connectedOn = (api: ReturnType<typeof apiClient>) =>
    api.get('/agent/connected-self-hosted-workers').then((r) => r.body.workers);

  beforeAll(async () => {
    model = await startFakeModelServer();
    env = createTestEnvironment('selfhosted', model.url, { leaseMs: TAKEOVER_LEASE_MS });
    workerRoot = mkdtempSync(join(tmpdir(), 'ambient-selfhosted-'));
    appA = await startTestApp(env, ['api', 'worker']);
    appB = await startTestApp(env, ['api']);
    apiA = apiClient(appA.baseUrl, appA.apiKey);
    apiB = apiClient(appB.baseUrl, appB.apiKey);
  });

  afterAll(async () => {
    await workers.killAll();
    await appB?.close();
    await appA?.close();
    await env?.destroy();
    await model?.close();
    if (workerRoot) rmSync(workerRoot, { recursive: true, force: true });
  });

  it('connects, shows on the other replica, and executes a run created there', async () => {
    const worker = await startWorker('box-1');
    const seen = await waitFor(
      () => connectedOn(apiB),
      (list) => list.some((w: { worker_host: string }) => w.worker_host === 'box-1'),
      { what: 'replica B to see the worker connected to replica A' },
    );
    expect(seen).toEqual([
      {
        worker_host: 'box-1',
        connection_count: 1,
        connected_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
        last_seen_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
      },
    ]);

    model.script('sh-write', [
      { toolCalls: [{ name: 'run_command', arguments: { command: 'echo on-box > out.txt' } }] },
      { text: 'Wrote out.txt on the box.' },
    ]);
    const runId = await createOn(apiB, 'box-1', 'Write a file [script:sh-write]');
    const done = await runUntil(runId, ['SUCCEEDED', 'FAILED', 'ERROR']);
    expect(done.state).toBe('SUCCEEDED');
    expect(done.status_message).toEqual({ message: 'Wrote out.txt on the box.' });
    expect(done.agent_config.worker_host).toBe('box-1');
    // Executed on the worker's machine, not by Ambient's own worker.
    expect(readFileSync(join(workerRoot, runId, 'out.txt'), 'utf8')).toBe('on-box\n');
    expect(existsSync(join(env.workspaceRoot, runId))).toBe(false);
    expect(worker.output()).toContain(`claimed task ${runId}`);
    // Inference is priced by the server; the team's own machine costs nothing.
    expect(done.request_usage.inference_cost_usd).toBeGreaterThan(0);
    expect(done.request_usage.compute_cost_usd).toBe(0);

    const events = (await apiA.get(`/agent/runs/${runId}/timeline`)).body.events;
    expect(events.map((e: { event_type: string }) => e.event_type)).toEqual([
      'oz_run_created',
      'oz_run_claimed',
      'agent_started',
      // The command on the box is on the server's timeline too (it prints nothing).
      'command_started',
      'command_finished',
      'oz_run_done',
    ]);
    expect(events[1]).toMatchObject({
      execution_id: 1,
      payload: { worker_id: 'box-1', self_hosted: true, attempt: 1 },
    });
    // The worker sent the command's events together (held from its start), not one call each.
    const scraped = await scrape(appA.ambient.metricsUrl!);
    const calls = (path: string) =>
      scraped.value('ambient_http_request_duration_seconds_count', {
        route: `/api/v1/harness-support/${path}`,
        status_code: '204',
      });
    expect(calls('events/batch')).toBeGreaterThanOrEqual(1);
    expect(calls('events')).toBe(0);
    // The conversation is stored as for service-hosted runs (prompt, tool call, result, answer).
    const messages = (await appA.dataSource.query(
      'SELECT execution_id, message FROM run_messages WHERE run_id = ? ORDER BY id',
      [runId],
    )) as { execution_id: number; message: string | { role: string } }[];
    const roles = messages.map(
      (m) => (typeof m.message === 'string' ? JSON.parse(m.message) : m.message).role,
    );
    expect(roles).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(messages.every((m) => Number(m.execution_id) === 1)).toBe(true);

    // A follow-up to the ended run continues it on the same worker host.
    const followup = await apiA.post(`/agent/runs/${runId}/followups`, { message: 'And now?' });
    expect(followup.body.outcome).toBe('handoff_execution');
    await waitFor(
      () => apiA.get(`/agent/runs/${runId}/timeline`).then((r) => r.body.events),
      (list) =>
        list.filter((e: { event_type: string }) => e.event_type === 'oz_run_done').length === 2,
      { what: 'the continuation to finish on the worker' },
    );
    const lastRequest = model.requests.filter((r) => r.script === 'sh-write').at(-1)!;
    expect(lastRequest.body.messages.at(-1)).toMatchObject({ role: 'user', content: 'And now?' });
  });

  it('rejects beyond max concurrency; another connection or freed capacity takes the run', async () => {
    model.script('sh-hold', [
      {
        toolCalls: [
          {
            name: 'run_command',
            arguments: { command: 'touch held; while [ ! -f release ]; do sleep 0.1; done' },
          },
        ],
      },
      { text: 'released' },
    ]);
    const first = await startWorker('busy-1', ['--max-concurrent-tasks', '1']);
    const held = await createOn(apiA, 'busy-1', 'Hold [script:sh-hold]');
    await waitFor(async () => existsSync(join(workerRoot, held, 'held')), Boolean, {
      what: 'the first run to occupy the worker',
    });

    const waiting = await createOn(apiA, 'busy-1', 'Quick one');
    await first.waitForOutput(
      new RegExp(`rejected task ${waiting}: worker at maximum concurrency`),
    );
    expect((await runUntil(waiting, ['QUEUED'])).state).toBe('QUEUED');

    // A second connection with the same worker id takes it while the first is still busy.
    const second = await startWorker('busy-1', ['--max-concurrent-tasks', '1']);
    expect((await runUntil(waiting, ['SUCCEEDED'])).state).toBe('SUCCEEDED');
    expect(second.output()).toContain(`claimed task ${waiting}`);
    expect((await connectedOn(apiB)).map((w: { worker_host: string }) => w.worker_host)).toEqual(
      ['box-1', 'busy-1'], // sorted by worker host
    );
    expect((await connectedOn(apiB))[1]).toMatchObject({ connection_count: 2 });
    second.child.kill('SIGTERM');
    await waitForExit(second.child);

    // With only the busy connection left, the next run waits until its task ends.
    const next = await createOn(apiA, 'busy-1', 'Next one');
    await first.waitForOutput(new RegExp(`rejected task ${next}`));
    expect((await run(next)).state).toMatch(/^(QUEUED|PENDING)$/);
    writeFileSync(join(workerRoot, held, 'release'), '');
    expect((await runUntil(held, ['SUCCEEDED'])).status_message.message).toBe('released');
    expect((await runUntil(next, ['SUCCEEDED'])).state).toBe('SUCCEEDED');
    expect(first.output()).toContain(`claimed task ${next}`);
  });

  it('sends task_cancellation: the worker stops the command and the run ends CANCELLED', async () => {
    const worker = workers.processes[0];
    model.script('sh-slow', [
      {
        toolCalls: [
          {
            name: 'run_command',
            arguments: { command: 'touch started; sleep 30; touch finished' },
          },
        ],
      },
      { text: 'should never get here' },
    ]);
    const runId = await createOn(apiA, 'box-1', 'Be slow [script:sh-slow]');
    await waitFor(async () => existsSync(join(workerRoot, runId, 'started')), Boolean, {
      what: 'the command to start on the worker',
    });
    const cancelled = await apiB.post(`/agent/runs/${runId}/cancel`);
    expect(cancelled.status).toBe(200);
    expect((await run(runId)).state).toBe('CANCELLED');

    await worker.waitForOutput(new RegExp(`task ${runId}: cancellation received`));
    await worker.waitForOutput(
      new RegExp(`task ${runId} ended: task_completed Task cancelled by user request`),
      10_000,
    );
    expect(existsSync(join(workerRoot, runId, 'finished'))).toBe(false);
    // The cancelled execution still reported what it cost.
    const ended = await waitFor(
      () => run(runId),
      (r) => (r.request_usage?.total_tokens ?? 0) > 0,
      { what: 'the usage of the cancelled execution' },
    );
    expect(ended.state).toBe('CANCELLED');
  });

  it('recovers the run of a worker killed mid-run and finishes it on the next worker', async () => {
    model.script('sh-crash', [
      { toolCalls: [{ name: 'run_command', arguments: { command: 'touch started; sleep 60' } }] },
      { text: 'recovered after the crash' },
    ]);
    const doomed = await startWorker('crashy');
    const runId = await createOn(apiA, 'crashy', 'Survive [script:sh-crash]');
    await waitFor(async () => existsSync(join(workerRoot, runId, 'started')), Boolean, {
      what: 'the command to start',
    });
    doomed.child.kill('SIGKILL');
    await waitForExit(doomed.child);

    // Its connection is gone from every replica, and the lapsed lease puts the run back.
    await waitFor(
      () => connectedOn(apiB),
      (list) => !list.some((w: { worker_host: string }) => w.worker_host === 'crashy'),
      { what: 'the killed worker to leave the presence list' },
    );
    expect((await runUntil(runId, ['QUEUED'])).state).toBe('QUEUED');

    await startWorker('crashy');
    const done = await runUntil(runId, ['SUCCEEDED', 'FAILED', 'ERROR']);
    expect(done.state).toBe('SUCCEEDED');
    expect(done.status_message.message).toBe('recovered after the crash');
    const claims = (await apiA.get(`/agent/runs/${runId}/timeline`)).body.events.filter(
      (e: { event_type: string }) => e.event_type === 'oz_run_claimed',
    );
    expect(claims.map((e: { execution_id: number }) => e.execution_id)).toEqual([1, 2]);
  });
  it('hands a running run back when the worker is stopped with SIGTERM', async () => {
    model.script('sh-stop', [
      { toolCalls: [{ name: 'run_command', arguments: { command: 'touch started; sleep 60' } }] },
      { text: 'finished by the next worker' },
    ]);
    const stopping = await startWorker('graceful');
    const runId = await createOn(apiA, 'graceful', 'Outlive a restart [script:sh-stop]');
    await waitFor(async () => existsSync(join(workerRoot, runId, 'started')), Boolean, {
      what: 'the command to start',
    });
    stopping.child.kill('SIGTERM');
    expect(await waitForExit(stopping.child)).toBe(0);
    await stopping.waitForOutput(new RegExp(`task ${runId} ended: task_failed`));
    expect((await runUntil(runId, ['QUEUED'])).state).toBe('QUEUED');

    await startWorker('graceful');
    expect((await runUntil(runId, ['SUCCEEDED'])).status_message.message).toBe(
      'finished by the next worker',
    );
    // Handed back, not lost: the interrupted execution does not count as an attempt.
    const claims = (await apiA.get(`/agent/runs/${runId}/timeline`)).body.events.filter(
      (e: { event_type: string }) => e.event_type === 'oz_run_claimed',
    );
    expect(claims.map((e: { payload: { attempt: number } }) => e.payload.attempt)).toEqual([1, 1]);
  });
});
