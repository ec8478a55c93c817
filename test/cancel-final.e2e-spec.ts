import type { Job } from 'bull';
import { RunQueue } from '../src/modules/runs/run-queue.service';
import type { ExecuteOutcome } from '../src/modules/workers/run-executor.service';
import { useTestApp } from './support/use-test-app';
import { settledWithin, waitFor } from './support/wait';

interface FollowupRow {
  id: string;
  consumed_at: Date | null;
  dropped_at: Date | null;
}

describe('cancel is final (api + worker, fake model server)', () => {
  const { model, app, api } = useTestApp('cancel_final', ['api', 'worker']);

  beforeAll(async () => {
    model.script('hang', [{ hang: true }]);
  });

  const followupRows = (runId: string): Promise<FollowupRow[]> =>
    app.dataSource.query(
      'SELECT id, consumed_at, dropped_at FROM run_followups WHERE run_id = ? ORDER BY created_at',
      [runId],
    );
  /**
   * The execution job's outcome, from the queue's own events: this app's worker processes the
   * job, so the listener is in place before the job can end. (Bull's `job.finished()` subscribes
   * to the global events first and misses a job that ended, and was removed, meanwhile.)
   */
  const outcomeOf = (runId: string): Promise<ExecuteOutcome> => {
    const queue = app.ambient.app.get(RunQueue).queue;
    const outcome = new Promise<ExecuteOutcome>((resolve, reject) => {
      const completed = (job: Job, result: ExecuteOutcome) => {
        if (job.id !== runId) return;
        stop();
        resolve(result);
      };
      const failed = (job: Job, err: Error) => {
        if (job.id !== runId) return;
        stop();
        reject(err);
      };
      const stop = () => {
        queue.removeListener('completed', completed);
        queue.removeListener('failed', failed);
      };
      queue.on('completed', completed);
      queue.on('failed', failed);
    });
    // Settled only where it is awaited; a test that fails before then leaves no rejection behind.
    void outcome.catch(() => undefined);
    return outcome;
  };
  const eventTypes = async (runId: string): Promise<string[]> =>
    (await api.get(`/agent/runs/${runId}/timeline`)).body.events.map(
      (e: { event_type: string }) => e.event_type,
    );

  it('a follow-up then a cancel: the run stays CANCELLED, no new execution, the follow-up not delivered', async () => {
    const calls = () => model.requests.filter((r) => r.script === 'hang').length;
    const before = calls();
    const runId = (await api.post('/agent/runs', { prompt: 'Think long [script:hang]' })).body
      .run_id as string;
    // The harness waits on the model: a follow-up now stays undelivered until the next turn.
    await waitFor(
      async () => calls(),
      (n) => n > before,
      { what: 'the model call' },
    );
    expect(await api.runState(runId)).toBe('INPROGRESS');
    // The execution's job: its outcome says whether the worker queued the run again.
    expect(await app.ambient.app.get(RunQueue).queue.getJob(runId)).not.toBeNull();
    const ended = outcomeOf(runId);

    const followup = await api.post(`/agent/runs/${runId}/followups`, { message: 'and then this' });
    expect(followup.status).toBe(200);
    expect(followup.body).toEqual({ followup_id: expect.any(String), outcome: 'live_session' });
    expect((await api.post(`/agent/runs/${runId}/cancel`)).status).toBe(200);

    expect(await settledWithin(ended, 'the execution to end')).toEqual({ requeue: false });
    const run = (await api.get(`/agent/runs/${runId}`)).body;
    expect(run.state).toBe('CANCELLED');
    const types = await eventTypes(runId);
    expect(types.filter((t) => t === 'oz_run_claimed')).toHaveLength(1);
    expect(types.filter((t) => t === 'agent_started')).toHaveLength(1);
    expect(types).toContain('followups_dropped');
    const dropped = (await api.get(`/agent/runs/${runId}/timeline`)).body.events.find(
      (e: { event_type: string }) => e.event_type === 'followups_dropped',
    );
    expect(dropped.payload.followup_ids).toEqual([followup.body.followup_id]);
    const [row] = await followupRows(runId);
    expect(row).toMatchObject({ id: followup.body.followup_id, consumed_at: null });
    expect(row.dropped_at).not.toBeNull();
    // Nothing brings it back: no claim shows up while the sweeper runs a few more rounds.
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(await api.runState(runId)).toBe('CANCELLED');
    expect((await eventTypes(runId)).filter((t) => t === 'oz_run_claimed')).toHaveLength(1);
  });

  it('refuses a follow-up to a cancelled run with 409 naming the state', async () => {
    const runId = (await api.post('/agent/runs', { prompt: 'Wait [script:hang]' })).body
      .run_id as string;
    expect((await api.post(`/agent/runs/${runId}/cancel`)).status).toBe(200);
    const res = await api.post(`/agent/runs/${runId}/followups`, { message: 'too late' });
    expect(res.status).toBe(409);
    expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(res.body).toMatchObject({
      status: 409,
      type: expect.stringMatching(/conflict$/),
      retryable: false,
    });
    expect(res.body.detail).toMatch(/CANCELLED/);
    expect(await followupRows(runId)).toEqual([]);
    expect(await api.runState(runId)).toBe('CANCELLED');
  });

  it('a follow-up racing a cancel lands before it (and is dropped) or is refused with 409', async () => {
    const runIds = await Promise.all(
      Array.from({ length: 8 }, async (_, i) => {
        const res = await api.post('/agent/runs', { prompt: `Race ${i} [script:hang]` });
        return res.body.run_id as string;
      }),
    );
    const results = await Promise.all(
      runIds.map(async (runId) => {
        const [followup, cancel] = await Promise.all([
          api.post(`/agent/runs/${runId}/followups`, { message: 'racing' }),
          api.post(`/agent/runs/${runId}/cancel`),
        ]);
        return { runId, followup, cancel };
      }),
    );
    for (const { runId, followup, cancel } of results) {
      expect(cancel.status).toBe(200);
      expect([200, 409]).toContain(followup.status);
      const rows = await followupRows(runId);
      if (followup.status === 409) {
        expect(rows).toEqual([]);
      } else {
        expect(rows).toHaveLength(1);
        expect(rows[0].consumed_at === null ? rows[0].dropped_at : 'consumed').not.toBeNull();
      }
    }
    // Every run stays cancelled once its execution (if any) has wound down.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    for (const runId of runIds) {
      expect(await api.runState(runId)).toBe('CANCELLED');
      expect((await eventTypes(runId)).filter((t) => t === 'oz_run_claimed').length).toBeLessThan(
        2,
      );
    }
  });
});
