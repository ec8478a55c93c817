import { useTestApp } from './support/use-test-app';
import { waitFor } from './support/wait';

interface RunSummary {
  run_id: string;
  state: string;
  source: string;
  title: string;
  created_at: string;
  schedule: { schedule_id: string; schedule_name: string; cron_schedule: string };
}

describe('scheduled agents firing (api + worker + scheduler)', () => {
  const { app, api } = useTestApp('schedules_firing', ['api', 'worker', 'scheduler'], {
    'schedules.tickIntervalMs': 100,
  });

  const runsOf = async (scheduleId: string): Promise<RunSummary[]> =>
    (
      await api.get(
        `/agent/runs?schedule_id=${scheduleId}&limit=500&sort_by=created_at&sort_order=asc`,
      )
    ).body.runs;
  const waitForRuns = (scheduleId: string, count: number) =>
    waitFor(
      () => runsOf(scheduleId),
      (runs) => runs.length >= count,
      { what: `${count} run(s) of schedule ${scheduleId}` },
    );
  const createSchedule = async (body: Record<string, unknown>) => {
    const res = await api.post('/agent/schedules', body);
    expect(res.status).toBe(201);
    return res.body as { id: string; history: { next_run: string | null } };
  };

  it('fires each tick as a SCHEDULED_AGENT run carrying the schedule as it was', async () => {
    const schedule = await createSchedule({
      name: 'Ticker',
      cron_schedule: '@every 1s',
      prompt: 'Check the queue',
      agent_config: { name: 'ticker' },
      metadata: { origin: 'schedule' },
    });
    const first = await waitForRuns(schedule.id, 1);
    expect(first[0]).toMatchObject({
      source: 'SCHEDULED_AGENT',
      title: 'Ticker',
      schedule: { schedule_id: schedule.id, schedule_name: 'Ticker', cron_schedule: '@every 1s' },
    });
    const detail = (await api.get(`/agent/runs/${first[0].run_id}`)).body;
    expect(detail).toMatchObject({
      prompt: 'Check the queue',
      metadata: { origin: 'schedule' },
      agent_config: { name: 'ticker', model_id: 'fake-model' },
    });
    // The firing is audited as Ambient acting for the team, naming the schedule.
    const audit = await api.get(`/audit-events?action=run.create&target_id=${first[0].run_id}`);
    expect(audit.body.events).toEqual([
      expect.objectContaining({
        actor: expect.objectContaining({
          type: 'system',
          id: `schedule:${schedule.id}`,
          name: 'schedule "Ticker"',
        }),
        target: { type: 'run', id: first[0].run_id },
        outcome: 'success',
        details: expect.objectContaining({ source: 'SCHEDULED_AGENT' }),
      }),
    ]);
    await waitFor(
      () => api.runState(first[0].run_id),
      (state) => state === 'SUCCEEDED',
      { what: 'the scheduled run to execute' },
    );

    const renamed = await api.put(`/agent/schedules/${schedule.id}`, {
      name: 'Renamed ticker',
      cron_schedule: '@every 2s',
      enabled: true,
      prompt: 'Check the queue',
    });
    expect(renamed.status).toBe(200);
    // A tick claimed just before the update still carries the old name; the next ones do not.
    const runs = await waitFor(
      () => runsOf(schedule.id),
      (list) => list.at(-1)!.schedule.schedule_name === 'Renamed ticker',
      { what: 'a run of the renamed schedule' },
    );
    expect(runs.at(-1)!.schedule).toEqual({
      schedule_id: schedule.id,
      schedule_name: 'Renamed ticker',
      cron_schedule: '@every 2s',
    });
    expect(runs[0].schedule.schedule_name).toBe('Ticker'); // earlier runs keep the old name

    const item = (await api.get(`/agent/schedules/${schedule.id}`)).body;
    expect(item.history.last_ran).not.toBeNull();
    expect(new Date(item.history.next_run).getTime() % 2000).toBe(0);
    expect(item.last_spawn_error).toBeNull();
    await api.delete(`/agent/schedules/${schedule.id}`);
  });

  it('pauses (no runs), resumes at the next tick without a burst, and deletes for good', async () => {
    // Every 3 s: the test sees the first tick after resuming before a second one can come, even
    // when a poll of its runs waits a second or two on a loaded machine.
    const watched = await createSchedule({
      name: 'Watched',
      cron_schedule: '@every 3s',
      prompt: 'w',
    });
    const control = await createSchedule({
      name: 'Control',
      cron_schedule: '@every 1s',
      prompt: 'c',
    });
    await waitForRuns(watched.id, 1);

    const paused = await api.post(`/agent/schedules/${watched.id}/pause`);
    expect(paused.body).toMatchObject({ enabled: false, history: { next_run: null } });
    const atPause = (await runsOf(watched.id)).length;
    // The scheduler keeps firing the control schedule: four more of its ticks pass (a tick of
    // the paused one among them) …
    const controlAtPause = (await runsOf(control.id)).length;
    await waitForRuns(control.id, controlAtPause + 4);
    // … and the paused one fired none of them.
    expect((await runsOf(watched.id)).length).toBe(atPause);

    const resumedAt = Date.now();
    const resumed = await api.post(`/agent/schedules/${watched.id}/resume`);
    const respondedAt = Date.now();
    expect(resumed.body.enabled).toBe(true);
    // The next multiple of 3 s after the server's "now", which lies between these two.
    const nextRun = new Date(resumed.body.history.next_run).getTime();
    expect(nextRun).toBeGreaterThan(resumedAt - 1000);
    expect(nextRun).toBeLessThanOrEqual(respondedAt + 3000);
    const afterResume = (await waitForRuns(watched.id, atPause + 1)).slice(atPause);
    expect(new Date(afterResume[0].created_at).getTime()).toBeGreaterThanOrEqual(nextRun);
    // One run for the first tick after resuming, none for the ticks missed while paused (a slow
    // poll may see the next tick's run too): every new run's tick is at or after next_run.
    const ticks: { scheduled_for: Date }[] = await app.dataSource.query(
      'SELECT scheduled_for FROM schedule_firings WHERE schedule_id = ? AND run_id IN (?)',
      [watched.id, afterResume.map((r) => r.run_id)],
    );
    expect(ticks).toHaveLength(afterResume.length);
    for (const { scheduled_for } of ticks) {
      expect(new Date(scheduled_for).getTime()).toBeGreaterThanOrEqual(nextRun);
    }

    expect((await api.delete(`/agent/schedules/${watched.id}`)).body).toEqual({ success: true });
    const atDelete = (await runsOf(watched.id)).length;
    const controlAtDelete = (await runsOf(control.id)).length;
    await waitForRuns(control.id, controlAtDelete + 3);
    expect((await runsOf(watched.id)).length).toBe(atDelete);
    await api.delete(`/agent/schedules/${control.id}`);
  });

  it('stores a failed spawn in last_spawn_error and keeps going', async () => {
    const agent = (await api.post('/agent/identities', { name: 'Scheduled bot' })).body;
    const schedule = await createSchedule({
      name: 'As agent',
      cron_schedule: '@every 1s',
      prompt: 'Do it as the agent',
      agent_uid: agent.uid,
    });
    const [run] = await waitForRuns(schedule.id, 1);
    expect((await api.get(`/agent/runs/${run.run_id}`)).body.executor).toMatchObject({
      uid: agent.uid,
      type: 'service_account',
    });

    expect((await api.delete(`/agent/identities/${agent.uid}`)).status).toBe(204);
    const failing = await waitFor(
      async () => (await api.get(`/agent/schedules/${schedule.id}`)).body,
      (item) => item.last_spawn_error !== null,
      { what: 'the spawn error to be recorded' },
    );
    expect(failing.last_spawn_error).toContain('agent_identity_uid: unknown agent identity');
    expect(failing.enabled).toBe(true);
    const nextAfterError = failing.history.next_run;
    await waitFor(
      async () => (await api.get(`/agent/schedules/${schedule.id}`)).body.history.next_run,
      (next) => next > nextAfterError,
      { what: 'the schedule to keep ticking' },
    );

    const fixed = await api.put(`/agent/schedules/${schedule.id}`, {
      name: 'As agent',
      cron_schedule: '@every 1s',
      enabled: true,
      prompt: 'Do it as the agent',
      agent_uid: null,
    });
    expect(fixed.status).toBe(200);
    const countAtFix = (await runsOf(schedule.id)).length;
    await waitForRuns(schedule.id, countAtFix + 1);
    await waitFor(
      async () => (await api.get(`/agent/schedules/${schedule.id}`)).body.last_spawn_error,
      (error) => error === null,
      { what: 'a successful tick to clear the error' },
    );
    await api.delete(`/agent/schedules/${schedule.id}`);
  });
});
