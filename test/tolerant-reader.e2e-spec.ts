import { useTestApp } from './support/use-test-app';

/** Fields a newer SDK might send: accepted and ignored, at the top and nested in `config`. */
const FUTURE = { future_field: 'from a newer SDK', future_object: { a: 1 } };

describe('tolerant reader: unknown request fields and query parameters are ignored (api role)', () => {
  const { api } = useTestApp('tolerant_reader', ['api']);

  it('creates a run with unknown fields at the top, in config and deeper, and drops them', async () => {
    const res = await api.post('/agent/runs', {
      prompt: 'tolerate',
      ...FUTURE,
      config: {
        model_id: 'fake-model',
        future_knob: true,
        harness: { type: 'oz', future_harness_option: 'x' },
      },
    });
    expect(res.status).toBe(200);
    const run = (await api.get(`/agent/runs/${res.body.run_id}`)).body;
    expect(run.agent_config).toMatchObject({ model_id: 'fake-model', harness: { type: 'oz' } });
    expect(run.agent_config).not.toHaveProperty('future_knob');
    expect(run.agent_config.harness).not.toHaveProperty('future_harness_option');
    expect(run).not.toHaveProperty('future_field');
  });

  it('still refuses a known field of the wrong type with 400 naming it, unknown fields beside it', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ prompt: 5, ...FUTURE }, /^prompt: must be a string/],
      [
        { prompt: 'x', config: { model_id: 5, future_knob: 1 }, ...FUTURE },
        /^config\.model_id: must be a string/,
      ],
      [{ prompt: 'x', config: { harness: { type: 'vim', future: 1 } } }, /^config\.harness\.type:/],
    ];
    for (const [body, detail] of cases) {
      const res = await api.post('/agent/runs', body);
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(res.body.detail).toMatch(detail);
    }
  });

  it('accepts unknown fields on schedules (top level and agent_config) and identities', async () => {
    const created = await api.post('/agent/schedules', {
      name: 'tolerant',
      cron_schedule: '0 9 * * *',
      prompt: 'daily',
      ...FUTURE,
      agent_config: { model_id: 'fake-model', future_knob: 'x' },
    });
    expect(created.status).toBe(201);
    expect(created.body.agent_config).toEqual({ model_id: 'fake-model' });
    const updated = await api.put(`/agent/schedules/${created.body.id}`, {
      name: 'tolerant',
      cron_schedule: '0 10 * * *',
      enabled: true,
      prompt: 'daily',
      ...FUTURE,
    });
    expect(updated.status).toBe(200);
    const wrong = await api.post('/agent/schedules', {
      name: 'tolerant',
      cron_schedule: '0 9 * * *',
      prompt: 'daily',
      enabled: 'yes',
      ...FUTURE,
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.detail).toMatch(/^enabled:/);

    const identity = await api.post('/agent/identities', { name: 'Tolerant', ...FUTURE });
    expect([200, 201]).toContain(identity.status);
    expect(identity.body).not.toHaveProperty('future_field');
    const badIdentity = await api.post('/agent/identities', { name: 7, ...FUTURE });
    expect(badIdentity.status).toBe(400);
    expect(badIdentity.body.detail).toMatch(/^name:/);
  });

  it('accepts a follow-up with unknown fields', async () => {
    const runId = (await api.post('/agent/runs', { prompt: 'steer me' })).body.run_id;
    const res = await api.post(`/agent/runs/${runId}/followups`, { message: 'more', ...FUTURE });
    expect(res.status).toBe(200);
  });

  it('ignores unknown query parameters', async () => {
    for (const path of [
      '/agent/runs?future_filter=1&limit=5',
      '/agent/schedules?future_filter=1',
      '/agent/identities?future_filter=1',
      '/agent/environments?future_filter=1',
      '/agent?future_filter=1',
      '/agent/models?future_filter=1',
    ]) {
      const res = await api.get(path);
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
    }
    // A known parameter is still checked.
    const bad = await api.get('/agent/runs?limit=0&future_filter=1');
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toMatch(/^limit:/);
  });
});
