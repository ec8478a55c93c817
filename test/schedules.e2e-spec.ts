import OzAPI, { BadRequestError, NotFoundError } from 'oz-agent-sdk';
import { ApiKeysService } from '../src/modules/teams/api-keys.service';
import { TeamsService } from '../src/modules/teams/teams.service';
import { apiClient } from './support/api-client';
import { useTestApp } from './support/use-test-app';

describe('scheduled agents: the API (CRUD, validation, teams, SDK)', () => {
  // Nothing fires here (no scheduler role); the model catalogue only validates model ids.
  const { app, api } = useTestApp('schedules', ['api']);

  const createSchedule = async (body: Record<string, unknown>) => {
    const res = await api.post('/agent/schedules', body);
    expect(res.status).toBe(201);
    return res.body as { id: string; history: { next_run: string | null } };
  };

  it('creates, lists by name, reads, replaces and deletes schedules', async () => {
    const created = await api.post('/agent/schedules', {
      name: 'Nightly audit',
      cron_schedule: '0 3 * * *',
      prompt: 'Audit the dependencies',
      agent_config: { model_id: 'fake-model', name: 'audit' },
      metadata: { team: 'platform' },
      enabled: false,
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'Nightly audit',
      cron_schedule: '0 3 * * *',
      enabled: false,
      prompt: 'Audit the dependencies',
      agent_config: { model_id: 'fake-model', name: 'audit' },
      metadata: { team: 'platform' },
      created_at: expect.stringMatching(/Z$/),
      updated_at: created.body.created_at,
      created_by: expect.objectContaining({ type: 'user' }),
      updated_by: expect.objectContaining({ type: 'user' }),
      history: { last_ran: null, next_run: null },
      last_spawn_error: null,
      scope: { type: 'Team', uid: expect.any(String) },
    });
    const id = created.body.id;
    await createSchedule({ name: 'alpha report', cron_schedule: '@daily', prompt: 'Report' });
    await createSchedule({ name: 'Zeta sweep', cron_schedule: '@hourly', prompt: 'Sweep' });
    const listed = await api.get('/agent/schedules');
    expect(listed.body.schedules.map((s: { name: string }) => s.name)).toEqual([
      'alpha report',
      'Nightly audit',
      'Zeta sweep',
    ]);
    expect((await api.get(`/agent/schedules/${id}`)).body).toEqual(created.body);

    const replaced = await api.put(`/agent/schedules/${id}`, {
      name: 'Morning audit',
      cron_schedule: '30 7 * * 1-5',
      enabled: true,
      prompt: 'Audit again',
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({
      name: 'Morning audit',
      cron_schedule: '30 7 * * 1-5',
      enabled: true,
      prompt: 'Audit again',
      agent_config: { model_id: 'fake-model', name: 'audit' }, // omitted: kept
      metadata: { team: 'platform' },
    });
    const next = new Date(replaced.body.history.next_run);
    expect([next.getUTCHours(), next.getUTCMinutes()]).toEqual([7, 30]);
    expect([1, 2, 3, 4, 5]).toContain(next.getUTCDay());
    expect(next.getTime()).toBeGreaterThan(Date.now());

    const cleared = await api.put(`/agent/schedules/${id}`, {
      name: 'Morning audit',
      cron_schedule: '30 7 * * 1-5',
      enabled: true,
      prompt: 'Audit again',
      agent_config: null,
      metadata: null,
    });
    expect(cleared.body.agent_config).toEqual({});
    expect(cleared.body.metadata).toBeUndefined();
    expect(cleared.body.history.next_run).toBe(replaced.body.history.next_run);

    expect((await api.delete(`/agent/schedules/${id}`)).body).toEqual({ success: true });
    expect((await api.get(`/agent/schedules/${id}`)).status).toBe(404);
    expect((await api.delete(`/agent/schedules/${id}`)).status).toBe(404);
    expect((await api.post(`/agent/schedules/${id}/pause`)).status).toBe(404);
  });

  it('refuses bad schedules with the field named, and changes nothing', async () => {
    const before = (await api.get('/agent/schedules')).body.schedules.length;
    const cases: [Record<string, unknown>, string][] = [
      [{}, 'name, cron_schedule: are required'],
      [{ name: 'x', prompt: 'p' }, 'cron_schedule: is required'],
      [{ name: 'x', cron_schedule: 'every day', prompt: 'p' }, 'cron_schedule: "every day" is not'],
      [{ name: 'x', cron_schedule: '0 9 * *', prompt: 'p' }, 'cron_schedule: "0 9 * *" is not'],
      [{ name: 'x', cron_schedule: '61 * * * *', prompt: 'p' }, 'cron_schedule: '],
      [
        { name: 'x', cron_schedule: '@daily' },
        'prompt: is required unless agent_config.skill_spec',
      ],
      [{ name: ' ', cron_schedule: '@daily', prompt: 'p' }, 'name: must not be empty'],
      [
        { name: 'x', cron_schedule: '@daily', prompt: 'p', agent_config: { model_id: 'gpt-99' } },
        'agent_config.model_id: unknown model "gpt-99"',
      ],
      [
        { name: 'x', cron_schedule: '@daily', prompt: 'p', metadata: { 'bad key': 'v' } },
        'metadata: key "bad key"',
      ],
      [
        { name: 'x', cron_schedule: '@daily', prompt: 'p', agent_uid: 'nobody' },
        'agent_uid: unknown agent identity "nobody"',
      ],
      [{ name: 'x', cron_schedule: '@daily', prompt: 'p', enabled: 'yes' }, 'enabled: must be a'],
    ];
    for (const [body, detail] of cases) {
      const res = await api.post('/agent/schedules', body);
      expect({ status: res.status, detail: res.body.detail }).toEqual({
        status: 400,
        detail: expect.stringContaining(detail),
      });
    }
    const kept = await createSchedule({ name: 'Kept', cron_schedule: '@daily', prompt: 'p' });
    const partial = await api.put(`/agent/schedules/${kept.id}`, { name: 'Renamed' });
    expect(partial.status).toBe(400);
    expect(partial.body.detail).toBe('cron_schedule, enabled: are required');
    const noPrompt = await api.put(`/agent/schedules/${kept.id}`, {
      name: 'Renamed',
      cron_schedule: '@daily',
      enabled: true,
    });
    expect(noPrompt.body.detail).toContain('prompt: is required');
    expect((await api.get(`/agent/schedules/${kept.id}`)).body.name).toBe('Kept');
    expect((await api.get('/agent/schedules')).body.schedules.length).toBe(before + 1);
    await api.delete(`/agent/schedules/${kept.id}`);
  });

  it('keeps teams apart', async () => {
    const ours = await createSchedule({ name: 'Ours', cron_schedule: '@daily', prompt: 'p' });
    const teams = app.ambient.app.get(TeamsService);
    const team = await teams.createTeam('schedules-other');
    const admin = await teams.createUser(team, { displayName: 'Other', role: 'admin' });
    const { key } = await app.ambient.app.get(ApiKeysService).create(admin, 'test');
    const them = apiClient(app.baseUrl, key);
    expect((await them.get('/agent/schedules')).body).toEqual({ schedules: [] });
    for (const res of await Promise.all([
      them.get(`/agent/schedules/${ours.id}`),
      them.post(`/agent/schedules/${ours.id}/pause`),
      them.delete(`/agent/schedules/${ours.id}`),
    ])) {
      expect(res.status).toBe(404);
    }
    expect((await api.get(`/agent/schedules/${ours.id}`)).body.enabled).toBe(true);
    await api.delete(`/agent/schedules/${ours.id}`);
  });

  it('works with the official oz-agent-sdk (alpha.8 schedule methods)', async () => {
    const client = new OzAPI({ apiKey: app.apiKey, baseURL: app.baseUrl, maxRetries: 0 });
    const created = await client.agent.schedules.create({
      name: 'Daily Code Review',
      cron_schedule: '0 9 * * *',
      prompt: 'Review open pull requests and provide feedback',
      enabled: true,
    });
    expect(created.history?.next_run).toMatch(/T09:00:00\.000Z$/);
    expect((await client.agent.schedules.retrieve(created.id)).name).toBe('Daily Code Review');
    expect((await client.agent.schedules.list()).schedules.map((s) => s.id)).toContain(created.id);
    const updated = await client.agent.schedules.update(created.id, {
      name: 'Weekly Code Review',
      cron_schedule: '0 10 * * 1',
      enabled: true,
      prompt: 'Review',
    });
    expect(updated.cron_schedule).toBe('0 10 * * 1');
    expect((await client.agent.schedules.pause(created.id)).enabled).toBe(false);
    expect((await client.agent.schedules.resume(created.id)).enabled).toBe(true);
    expect(await client.agent.schedules.delete(created.id)).toEqual({ success: true });
    await expect(client.agent.schedules.retrieve(created.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(
      client.agent.schedules.create({ name: 'Bad', cron_schedule: 'nope', prompt: 'x' }),
    ).rejects.toBeInstanceOf(BadRequestError);
  });
});
