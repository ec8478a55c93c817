import { apiClient } from './support/api-client';
import { useTestApp } from './support/use-test-app';
import { waitFor } from './support/wait';

const NO_LIMITS = { max_concurrent_runs: null, monthly_budget_usd: null, max_run_cost_usd: null };

interface RunBody {
  run_id: string;
  state: string;
  started_at?: string;
  finished_at?: string;
  status_message?: { message: string; error_code?: string };
  request_usage?: { inference_cost_usd: number };
}

describe('limits: concurrency, budgets and the limits API (api + worker + scheduler)', () => {
  const { api, app, model } = useTestApp('limits', ['api', 'worker', 'scheduler'], {
    'schedules.tickIntervalMs': 100,
    // No sweeper to fall back on: a waiting run must be started by the slot freeing.
    'runs.dispatchSweepIntervalMs': 3_600_000,
  });

  const setLimits = async (body: Record<string, unknown>) => {
    const res = await api.put('/limits', body);
    expect(res.status).toBe(200);
    return res.body as typeof NO_LIMITS;
  };
  const run = async (id: string): Promise<RunBody> =>
    (await api.get(`/agent/runs/${id}`)).body as RunBody;
  const ended = (id: string) =>
    waitFor(
      () => run(id),
      (r) => ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(r.state),
      { what: `run ${id} to end` },
    );
  const atCapacityColumn = async (id: string): Promise<boolean> => {
    const [row] = (await app.dataSource.query('SELECT at_capacity FROM runs WHERE id = ?', [
      id,
    ])) as { at_capacity: number }[];
    return Number(row.at_capacity) === 1;
  };
  /** A run that holds its slot (its model call never answers) until it is cancelled. */
  const holdSlot = async (name: string): Promise<string> => {
    model.script(name, [{ hang: true }]);
    const created = await api.post('/agent/runs', { prompt: `hold [script:${name}]` });
    expect(created.status).toBe(200);
    await waitFor(
      async () => model.requests.some((r) => r.script === name),
      (seen) => seen,
      { what: `run ${name} to call the model` },
    );
    return created.body.run_id as string;
  };

  afterEach(async () => {
    await setLimits(NO_LIMITS);
  });

  describe('the limits API', () => {
    it('reads no limits, sets them (omitted = unchanged, null = none) and audits the change', async () => {
      expect((await api.get('/limits')).body).toEqual(NO_LIMITS);
      expect(await setLimits({ max_concurrent_runs: 5, monthly_budget_usd: 12.5 })).toEqual({
        max_concurrent_runs: 5,
        monthly_budget_usd: 12.5,
        max_run_cost_usd: null,
      });
      expect(await setLimits({ max_run_cost_usd: 0.25, monthly_budget_usd: null })).toEqual({
        max_concurrent_runs: 5,
        monthly_budget_usd: null,
        max_run_cost_usd: 0.25,
      });
      expect((await api.get('/limits')).body).toEqual({
        max_concurrent_runs: 5,
        monthly_budget_usd: null,
        max_run_cost_usd: 0.25,
      });
      const events = (await app.dataSource.query(
        `SELECT target_type, details FROM audit_events WHERE action = 'limits.update'
          ORDER BY occurred_at`,
      )) as { target_type: string; details: string | Record<string, unknown> }[];
      expect(events.length).toBeGreaterThanOrEqual(2);
      const details = events.map((e) =>
        typeof e.details === 'string' ? JSON.parse(e.details) : e.details,
      );
      expect(events[1].target_type).toBe('team');
      expect(details[1]).toEqual({
        before: { max_concurrent_runs: 5, monthly_budget_usd: 12.5, max_run_cost_usd: null },
        after: { max_concurrent_runs: 5, monthly_budget_usd: null, max_run_cost_usd: 0.25 },
      });
    });

    it.each([
      [{ max_concurrent_runs: -1 }, 'max_concurrent_runs'],
      [{ max_concurrent_runs: 1.5 }, 'max_concurrent_runs'],
      [{ max_concurrent_runs: '3' }, 'max_concurrent_runs'],
      [{ monthly_budget_usd: -0.01 }, 'monthly_budget_usd'],
      [{ monthly_budget_usd: 'ten' }, 'monthly_budget_usd'],
      [{ max_run_cost_usd: -5 }, 'max_run_cost_usd'],
      [{ max_run_cost_usd: 1e12 }, 'max_run_cost_usd'],
    ])('refuses %j with an Error naming %s, changing nothing', async (body, field) => {
      await setLimits({ max_concurrent_runs: 7 });
      const res = await api.put('/limits', body);
      expect(res.status).toBe(400);
      expect(res.body.error_code ?? res.body.code ?? res.body.type).toBeDefined();
      expect(JSON.stringify(res.body)).toContain(field);
      expect((await api.get('/limits')).body).toEqual({ ...NO_LIMITS, max_concurrent_runs: 7 });
    });

    it('lets any role read the limits but only an admin change them', async () => {
      for (const role of ['member', 'viewer'] as const) {
        const key = (await api.post('/api-keys', { name: `${role} limits`, role })).body
          .key as string;
        const caller = apiClient(app.baseUrl, key);
        expect((await caller.get('/limits')).status).toBe(200);
        const refused = await caller.put('/limits', { max_concurrent_runs: 1 });
        expect(refused.status).toBe(403);
        expect(JSON.stringify(refused.body)).toContain('limits.write');
      }
      expect((await api.get('/limits')).body).toEqual(NO_LIMITS);
    });

    it("keeps an agent identity's own limits on the identity", async () => {
      const agent = (await api.post('/agent/identities', { name: 'limited agent' })).body as {
        uid: string;
      };
      expect((await api.get(`/agent/identities/${agent.uid}/limits`)).body).toEqual(NO_LIMITS);
      const put = await api.put(`/agent/identities/${agent.uid}/limits`, {
        max_concurrent_runs: 2,
      });
      expect(put.status).toBe(200);
      expect((await api.get(`/agent/identities/${agent.uid}/limits`)).body).toEqual({
        ...NO_LIMITS,
        max_concurrent_runs: 2,
      });
      // The team's own limits are another row.
      expect((await api.get('/limits')).body).toEqual(NO_LIMITS);
      const missing = await api.put('/agent/identities/Zz0000000000000000000z/limits', {
        max_concurrent_runs: 1,
      });
      expect(missing.status).toBe(404);
      await api.put(`/agent/identities/${agent.uid}/limits`, NO_LIMITS);
    });
  });

  describe('max_concurrent_runs', () => {
    it('queues a run beyond the limit with at_capacity and starts it when the first ends', async () => {
      await setLimits({ max_concurrent_runs: 1 });
      model.script('first-of-one', [{ delayMs: 1500, then: { text: 'first done' } }]);
      model.script('second-of-one', [{ text: 'second done' }]);
      const first = await api.post('/agent/runs', { prompt: 'one [script:first-of-one]' });
      expect(first.body).toMatchObject({ state: 'QUEUED', at_capacity: false });
      const second = await api.post('/agent/runs', { prompt: 'two [script:second-of-one]' });
      expect(second.body).toMatchObject({ state: 'QUEUED', at_capacity: true });
      // While the first holds the slot, the second waits without calling the model.
      await waitFor(
        () => run(first.body.run_id),
        (r) => r.state === 'INPROGRESS',
        { what: 'the first run to start' },
      );
      expect((await run(second.body.run_id)).state).toBe('QUEUED');
      const a = await ended(first.body.run_id);
      const b = await ended(second.body.run_id);
      expect([a.state, b.state]).toEqual(['SUCCEEDED', 'SUCCEEDED']);
      expect(new Date(b.started_at!).getTime()).toBeGreaterThanOrEqual(
        new Date(a.finished_at!).getTime(),
      );
      expect(await atCapacityColumn(second.body.run_id)).toBe(false);
    });

    it('starts a waiting run when its slot is freed by a cancel', async () => {
      await setLimits({ max_concurrent_runs: 1 });
      const holder = await holdSlot('hold-for-cancel');
      model.script('after-cancel', [{ text: 'ran after the cancel' }]);
      const waiting = await api.post('/agent/runs', { prompt: 'wait [script:after-cancel]' });
      expect(waiting.body.at_capacity).toBe(true);
      expect((await api.post(`/agent/runs/${holder}/cancel`)).status).toBe(200);
      expect((await ended(waiting.body.run_id)).state).toBe('SUCCEEDED');
      expect((await ended(holder)).state).toBe('CANCELLED');
    });

    it('starts a waiting run when the limit is raised, the holder still running', async () => {
      await setLimits({ max_concurrent_runs: 1 });
      const holder = await holdSlot('hold-for-raise');
      model.script('after-raise', [{ text: 'ran after the raise' }]);
      const waiting = await api.post('/agent/runs', { prompt: 'wait [script:after-raise]' });
      expect(waiting.body.at_capacity).toBe(true);
      await setLimits({ max_concurrent_runs: 2 });
      expect((await ended(waiting.body.run_id)).state).toBe('SUCCEEDED');
      expect((await run(holder)).state).toBe('INPROGRESS');
      await api.post(`/agent/runs/${holder}/cancel`);
      await ended(holder);
    });

    it("holds an agent identity's runs to the agent's own limit", async () => {
      const agent = (await api.post('/agent/identities', { name: 'one at a time' })).body as {
        uid: string;
      };
      await api.put(`/agent/identities/${agent.uid}/limits`, { max_concurrent_runs: 1 });
      model.script('agent-hold', [{ hang: true }]);
      const held = await api.post('/agent/runs', {
        prompt: 'agent hold [script:agent-hold]',
        agent_identity_uid: agent.uid,
      });
      expect(held.body.at_capacity).toBe(false);
      const second = await api.post('/agent/runs', {
        prompt: 'agent second',
        agent_identity_uid: agent.uid,
      });
      expect(second.body.at_capacity).toBe(true);
      // The team has no limit: a run of no agent starts at once.
      const other = await api.post('/agent/runs', { prompt: 'not the agent' });
      expect(other.body.at_capacity).toBe(false);
      expect((await ended(other.body.run_id)).state).toBe('SUCCEEDED');
      expect((await run(second.body.run_id)).state).toBe('QUEUED');
      await api.post(`/agent/runs/${held.body.run_id}/cancel`);
      expect((await ended(second.body.run_id)).state).toBe('SUCCEEDED');
    });

    it('says how many runs hold and wait for a slot, and what the month spent, against the limits (GET /usage/limits)', async () => {
      await setLimits({ max_concurrent_runs: 1, monthly_budget_usd: 250 });
      const holder = await holdSlot('hold-for-usage');
      const waiting = await api.post('/agent/runs', { prompt: 'wait for the usage figures' });
      expect(waiting.body.at_capacity).toBe(true);
      const viewerKey = (await api.post('/api-keys', { name: 'usage reader', role: 'viewer' })).body
        .key as string;
      const viewer = apiClient(app.baseUrl, viewerKey);
      const read = await viewer.get('/usage/limits');
      expect(read.status).toBe(200);
      expect(read.body).toMatchObject({
        running_runs: 1,
        waiting_runs: 1,
        max_concurrent_runs: 1,
        monthly_budget_usd: 250,
      });
      // The spend is the inference cost the team's runs of this month stored, as the budget counts it.
      const monthStart = Date.parse(read.body.month_start as string);
      expect(new Date(monthStart).toISOString()).toMatch(/^\d{4}-\d{2}-01T00:00:00.000Z$/);
      const listed = (await api.get('/agent/runs?limit=100')).body as {
        runs: (RunBody & { created_at: string })[];
        page_info: { has_next_page: boolean };
      };
      expect(listed.page_info.has_next_page).toBe(false);
      const spent = listed.runs
        .filter((r) => Date.parse(r.created_at) >= monthStart)
        .reduce((sum, r) => sum + (r.request_usage?.inference_cost_usd ?? 0), 0);
      expect(read.body.spent_this_month_usd).toBeCloseTo(spent, 9);

      // Both cancelled (the waiting one first, so that it never starts): nothing holds a slot.
      await api.post(`/agent/runs/${waiting.body.run_id}/cancel`);
      await api.post(`/agent/runs/${holder}/cancel`);
      await ended(waiting.body.run_id);
      await ended(holder);
      const after = (await api.get('/usage/limits')).body;
      expect(after).toMatchObject({ running_runs: 0, waiting_runs: 0 });
      await setLimits(NO_LIMITS);
      expect((await api.get('/usage/limits')).body).toMatchObject({
        max_concurrent_runs: null,
        monthly_budget_usd: null,
      });
    });

    it('makes a schedule firing at the limit wait like any run', async () => {
      await setLimits({ max_concurrent_runs: 1 });
      const holder = await holdSlot('hold-for-schedule');
      const schedule = await api.post('/agent/schedules', {
        name: 'At the limit',
        cron_schedule: '@every 1s',
        prompt: 'Scheduled at the limit',
      });
      expect(schedule.status).toBe(201);
      const [fired] = await waitFor(
        async () =>
          (await api.get(`/agent/runs?schedule_id=${schedule.body.id}&limit=10`)).body
            .runs as RunBody[],
        (runs) => runs.length > 0,
        { what: 'the schedule to fire' },
      );
      await waitFor(
        () => atCapacityColumn(fired.run_id),
        (waiting) => waiting,
        { what: 'the scheduled run to wait for a slot' },
      );
      expect((await run(fired.run_id)).state).toBe('QUEUED');
      expect((await api.delete(`/agent/schedules/${schedule.body.id}`)).status).toBe(200);
      await api.post(`/agent/runs/${holder}/cancel`);
      expect((await ended(fired.run_id)).state).toBe('SUCCEEDED');
    });
  });

  describe('budgets', () => {
    it('fails a run FAILED budget_exceeded, before any model call, once the month is spent', async () => {
      model.script('spend', [{ text: 'spent something' }]);
      const paid = await ended(
        (await api.post('/agent/runs', { prompt: 'spend [script:spend]' })).body.run_id,
      );
      expect(paid.request_usage!.inference_cost_usd).toBeGreaterThan(0);
      await setLimits({ monthly_budget_usd: paid.request_usage!.inference_cost_usd / 2 });
      model.script('over-budget', [{ text: 'must not be asked' }]);
      const refused = await ended(
        (await api.post('/agent/runs', { prompt: 'more [script:over-budget]' })).body.run_id,
      );
      expect(refused.state).toBe('FAILED');
      expect(refused.status_message).toMatchObject({ error_code: 'budget_exceeded' });
      expect(refused.status_message!.message).toContain('monthly_budget_usd');
      expect(model.requests.filter((r) => r.script === 'over-budget')).toHaveLength(0);
      // Raising the budget lets runs spend again.
      await setLimits({ monthly_budget_usd: 1000 });
      model.script('within-budget', [{ text: 'fine' }]);
      const fine = await ended(
        (await api.post('/agent/runs', { prompt: 'ok [script:within-budget]' })).body.run_id,
      );
      expect(fine.state).toBe('SUCCEEDED');
    });

    it('stops a run that reaches its max_run_cost_usd at its next model call', async () => {
      // One call at $1/M input tokens costs more than a millionth of a dollar.
      await setLimits({ max_run_cost_usd: 0.000001 });
      model.script('expensive', [
        { toolCalls: [{ name: 'run_command', arguments: { command: 'echo step' } }] },
        { text: 'never reached' },
      ]);
      const stopped = await ended(
        (await api.post('/agent/runs', { prompt: 'costly [script:expensive]' })).body.run_id,
      );
      expect(stopped.state).toBe('FAILED');
      expect(stopped.status_message).toMatchObject({ error_code: 'budget_exceeded' });
      expect(stopped.status_message!.message).toContain('max_run_cost_usd');
      expect(model.requests.filter((r) => r.script === 'expensive')).toHaveLength(1);
      // What the one call cost is still recorded.
      expect(stopped.request_usage!.inference_cost_usd).toBeGreaterThan(0.000001);
    });

    it('lets a run ask for a cost cap of its own (max_cost_usd, an Ambient extension)', async () => {
      const refused = await api.post('/agent/runs', { prompt: 'cap', max_cost_usd: -1 });
      expect(refused.status).toBe(400);
      expect(refused.body.detail).toContain('max_cost_usd');
      model.script('own-cap', [
        { toolCalls: [{ name: 'run_command', arguments: { command: 'echo step' } }] },
        { text: 'never reached' },
      ]);
      const created = await api.post('/agent/runs', {
        prompt: 'own cap [script:own-cap]',
        max_cost_usd: 0.000001,
      });
      expect(created.status).toBe(200);
      const stopped = await ended(created.body.run_id);
      expect(stopped.status_message).toMatchObject({ error_code: 'budget_exceeded' });
      expect(stopped.status_message!.message).toContain("the run's own max_cost_usd");
      expect(model.requests.filter((r) => r.script === 'own-cap')).toHaveLength(1);
    });
  });
});
