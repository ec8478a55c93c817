import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { RunQueue } from '../src/modules/runs/run-queue.service';
import { LOADED_TAKEOVER_LEASE_MS } from './support/test-app';
import { useTestApp } from './support/use-test-app';
import { waitFor } from './support/wait';
import { spawnAmbient, waitForExit } from './support/worker-process';

/**
 * Workers are separate processes here, killed and restarted for real: no accepted run may be
 * lost or left INPROGRESS.
 */
describe('worker crashes, lost jobs and graceful shutdown', () => {
  const workers: ReturnType<typeof spawnAmbient>[] = [];

  const startWorker = async (extra: Record<string, string> = {}) => {
    const worker = spawnAmbient(env.childEnv({ AMBIENT_ROLES: 'worker', ...extra }));
    workers.push(worker);
    await worker.ready;
    return worker;
  };

  const run = (runId: string) => api.get(`/agent/runs/${runId}`).then((r) => r.body);

  const { model, env, app, api } = useTestApp(
    'recovery',
    ['api'],
    {},
    { leaseMs: LOADED_TAKEOVER_LEASE_MS },
  );

  afterEach(async () => {
    for (const worker of workers.splice(0)) {
      worker.child.kill('SIGKILL');
      await waitForExit(worker.child);
    }
  });

  it('retries the run of a killed worker on another worker, continuing its conversation', async () => {
    model.script('crash', [
      { toolCalls: [{ name: 'run_command', arguments: { command: 'touch started; sleep 60' } }] },
      { text: 'recovered after the crash' },
    ]);
    const first = await startWorker();
    const runId = (await api.post('/agent/runs', { prompt: 'Survive [script:crash]' })).body.run_id;
    await waitFor(async () => existsSync(join(env.workspaceRoot, runId, 'started')), Boolean, {
      what: 'the command to start',
    });
    expect((await run(runId)).state).toBe('INPROGRESS');

    first.child.kill('SIGKILL');
    await waitForExit(first.child);
    await startWorker();

    const finished = await waitFor(
      () => run(runId),
      (r) => r.state === 'SUCCEEDED',
      {
        what: 'the run to be recovered',
      },
    );
    expect(finished.status_message.message).toBe('recovered after the crash');
    const claims = (await api.get(`/agent/runs/${runId}/timeline`)).body.events.filter(
      (e: { event_type: string }) => e.event_type === 'oz_run_claimed',
    );
    expect(claims.map((e: { execution_id: number }) => e.execution_id)).toEqual([1, 2]);
    expect(claims[1].payload.attempt).toBe(2);
    // The interrupted command was answered as interrupted so the provider accepts the history.
    const retry = model.requests.filter((r) => r.script === 'crash').at(-1)!;
    expect(String(retry.body.messages.find((m) => m.role === 'tool')?.content)).toContain(
      'Interrupted',
    );
  });

  it('ends a run in ERROR with internal_error once its attempts are used up', async () => {
    model.script('crash-once', [
      { toolCalls: [{ name: 'run_command', arguments: { command: 'touch started; sleep 60' } }] },
    ]);
    const first = await startWorker({ AMBIENT_RUN_MAX_ATTEMPTS: '1' });
    const runId = (await api.post('/agent/runs', { prompt: 'Die [script:crash-once]' })).body
      .run_id;
    await waitFor(async () => existsSync(join(env.workspaceRoot, runId, 'started')), Boolean, {
      what: 'the command to start',
    });
    first.child.kill('SIGKILL');
    await waitForExit(first.child);
    await startWorker({ AMBIENT_RUN_MAX_ATTEMPTS: '1' });

    const ended = await waitFor(
      () => run(runId),
      (r) => r.state === 'ERROR',
      {
        what: 'the run to end in ERROR',
      },
    );
    expect(ended.status_message).toMatchObject({ error_code: 'internal_error', retryable: true });
    expect(ended.status_message.message).toMatch(/stopped responding/);
    expect(ended.finished_at).not.toBeNull();
  });

  it('dispatches a queued run whose job was lost', async () => {
    const queue = app.ambient.app.get(RunQueue).queue;
    const runId = (await api.post('/agent/runs', { prompt: 'Lost job' })).body.run_id;
    // The creation answers once the run is committed; its job follows.
    const job = await waitFor(() => queue.getJob(runId), Boolean, { what: 'the run’s job' });
    await job!.remove();
    expect(await queue.getJob(runId)).toBeNull();

    await startWorker();
    const finished = await waitFor(
      () => run(runId),
      (r) => r.state === 'SUCCEEDED',
      {
        what: 'the orphaned run to be dispatched',
      },
    );
    expect(finished.status_message.message).toBe('Done.');
  });

  it('executes a run whose enqueue failed after it was committed', async () => {
    const queue = app.ambient.app.get(RunQueue).queue;
    const addBulk = jest
      .spyOn(app.ambient.app.get(RunQueue).adder, 'addBulk')
      .mockRejectedValueOnce(new Error('Redis is down'));
    try {
      const created = await api.post('/agent/runs', { prompt: 'Enqueue failed' });
      expect(created.status).toBe(200);
      const runId = created.body.run_id as string;
      await waitFor(
        async () => addBulk.mock.calls.length,
        (n) => n > 0,
        { what: 'the enqueue' },
      );
      expect(addBulk.mock.calls[0][0].map((job) => job.opts?.jobId)).toEqual([runId]);
      expect(await queue.getJob(runId)).toBeNull();

      await startWorker();
      const finished = await waitFor(
        () => run(runId),
        (r) => r.state === 'SUCCEEDED',
        { what: 'the run without a job to be dispatched by the sweeper' },
      );
      expect(finished.status_message.message).toBe('Done.');
    } finally {
      addBulk.mockRestore();
    }
  });

  it('lets an in-flight run finish on SIGTERM, then exits cleanly', async () => {
    model.script('short', [
      { toolCalls: [{ name: 'run_command', arguments: { command: 'touch started; sleep 1' } }] },
      { text: 'finished during shutdown' },
    ]);
    const worker = await startWorker();
    const runId = (await api.post('/agent/runs', { prompt: 'Finish [script:short]' })).body.run_id;
    await waitFor(async () => existsSync(join(env.workspaceRoot, runId, 'started')), Boolean, {
      what: 'the command to start',
    });
    worker.child.kill('SIGTERM');
    expect(await waitForExit(worker.child)).toBe(0);
    const finished = await run(runId);
    expect(finished.state).toBe('SUCCEEDED');
    expect(finished.status_message.message).toBe('finished during shutdown');
  });
});
