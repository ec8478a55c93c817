import { RunQueue } from '../src/modules/runs/run-queue.service';
import { useTestApp } from './support/use-test-app';
import { waitFor } from './support/wait';

/**
 * The sweeper's safety net for runs waiting for a concurrency slot: whatever Redis holds under the
 * run's id, a waiting run is started once a slot is free.
 */
describe('max_concurrent_runs: the sweeper starts waiting runs (api + worker)', () => {
  const { api, app, model } = useTestApp('limits_sweeper', ['api', 'worker'], {
    'runs.dispatchSweepIntervalMs': 100,
  });

  const state = async (id: string): Promise<string> =>
    ((await api.get(`/agent/runs/${id}`)).body as { state: string }).state;

  afterEach(async () => {
    await api.put('/limits', { max_concurrent_runs: null });
  });

  it('starts a waiting run whose id a leftover job holds in Redis (an add of it is a no-op)', async () => {
    expect((await api.put('/limits', { max_concurrent_runs: 1 })).status).toBe(200);
    model.script('holds-the-slot', [{ hang: true }]);
    const holder = (await api.post('/agent/runs', { prompt: 'hold [script:holds-the-slot]' }))
      .body as { run_id: string };
    await waitFor(async () => model.requests.some((r) => r.script === 'holds-the-slot'), Boolean, {
      what: 'the holder to call the model',
    });
    model.script('after-leftover', [{ text: 'ran' }]);
    const waiting = await api.post('/agent/runs', { prompt: 'wait [script:after-leftover]' });
    expect(waiting.body).toMatchObject({ state: 'QUEUED', at_capacity: true });
    const runId = waiting.body.run_id as string;

    // What a removal racing a worker's take leaves: the job's hash with only `processedOn`, in
    // no list of the queue. Bull's add of the run's id finds it and adds nothing.
    const queue = app.ambient.app.get(RunQueue).queue;
    await queue.client.hset(queue.toKey(runId), 'processedOn', String(Date.now()));

    expect((await api.post(`/agent/runs/${holder.run_id}/cancel`)).status).toBe(200);
    const ended = await waitFor(
      () => state(runId),
      (s) => ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(s),
      { what: 'the waiting run to end' },
    );
    expect(ended).toBe('SUCCEEDED');
    expect(await state(holder.run_id)).toBe('CANCELLED');
  });
});
