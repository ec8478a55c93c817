import { ApiKeysService } from '../src/modules/teams/api-keys.service';
import { TeamsService } from '../src/modules/teams/teams.service';
import { apiClient } from './support/api-client';
import { useTestApp } from './support/use-test-app';

describe('agent identities: the API (CRUD, validation, who may manage, keys)', () => {
  let teams: TeamsService;

  const { app, api } = useTestApp('identities', ['api'], {
    'identities.defaultAgentLimit': 3,
  });

  beforeAll(async () => {
    teams = app.ambient.app.get(TeamsService);
  });

  const createAgent = async (body: Record<string, unknown>) => {
    const res = await api.post('/agent/identities', body);
    expect(res.status).toBe(201);
    return res.body as { uid: string; name: string; available: boolean };
  };
  const deleteAll = async () => {
    for (const agent of (await api.get('/agent/identities')).body.agents) {
      expect((await api.delete(`/agent/identities/${agent.uid}`)).status).toBe(204);
    }
  };

  it('creates, reads, updates and deletes agents with the full Oz AgentResponse', async () => {
    const created = await api.post('/agent/identities', {
      name: '  Reviewer ',
      description: 'Reviews pull requests',
      base_model: 'fake-model',
      prompt: 'You review code.',
      secrets: [{ name: 'GITHUB_TOKEN' }],
      skills: ['acme/tools:.agents/skills/review/SKILL.md'],
      memory: { attached_stores: [{ uid: 'mem1', access: 'read_only', instructions: 'notes' }] },
      worker_host: 'build-box',
    });
    expect(created.status).toBe(201);
    const uid = created.body.uid;
    expect(created.body).toEqual({
      uid: expect.stringMatching(/^[A-Za-z0-9]{22}$/),
      name: 'Reviewer',
      description: 'Reviews pull requests',
      available: true,
      created_at: expect.stringMatching(/Z$/),
      updated_at: created.body.created_at,
      default_runner_uid: '',
      memory: {
        attached_stores: [{ uid: 'mem1', access: 'read_only', instructions: 'notes' }],
        auto_memory: { enabled: true },
      },
      secrets: [{ name: 'GITHUB_TOKEN' }],
      skills: ['acme/tools:.agents/skills/review/SKILL.md'],
      prompt: 'You review code.',
      factory_uid: null,
      on_behalf_of_enabled: false,
      base_model: 'fake-model',
      worker_host: 'build-box',
    });

    const minimal = await createAgent({ name: 'Plain' });
    expect(minimal).toMatchObject({
      description: null,
      prompt: null,
      default_runner_uid: '',
      secrets: [],
      skills: [],
      memory: { attached_stores: [], auto_memory: { enabled: true } },
    });

    expect((await api.get(`/agent/identities/${uid}`)).body).toEqual(created.body);
    const listed = await api.get('/agent/identities');
    expect(listed.body.agents.map((a: { name: string }) => a.name)).toEqual(['Reviewer', 'Plain']);

    // Partial update: omitted and null keep, empty clears, a value replaces.
    const updated = await api.put(`/agent/identities/${uid}`, {
      name: 'Senior reviewer',
      description: null,
      skills: [],
      secrets: [{ name: 'NPM_TOKEN' }],
      memory: { auto_memory: { enabled: false } },
      worker_host: '',
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      name: 'Senior reviewer',
      description: 'Reviews pull requests',
      skills: [],
      secrets: [{ name: 'NPM_TOKEN' }],
      prompt: 'You review code.',
      memory: {
        attached_stores: [{ uid: 'mem1', access: 'read_only', instructions: 'notes' }],
        auto_memory: { enabled: false },
      },
    });
    expect(updated.body.worker_host).toBeUndefined();
    expect(updated.body.updated_at >= created.body.updated_at).toBe(true);

    const appended = await api.put(`/agent/identities/${uid}`, {
      secrets_append: [{ name: 'SLACK_TOKEN' }, { name: 'NPM_TOKEN' }],
    });
    expect(appended.body.secrets).toEqual([{ name: 'NPM_TOKEN' }, { name: 'SLACK_TOKEN' }]);

    const deleted = await api.delete(`/agent/identities/${uid}`);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect((await api.get(`/agent/identities/${uid}`)).status).toBe(404);
    expect((await api.delete(`/agent/identities/${uid}`)).status).toBe(404);
    await deleteAll();
  });

  it('refuses bad input with the field named and changes nothing', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{}, 'name: must be a string'],
      [{ name: '   ' }, 'name: must not be empty'],
      [{ name: 'x', secrets: [{ name: 'A' }, { name: 'A' }] }, 'secrets: duplicate name(s): A'],
      [{ name: 'x', base_model: 'gpt-99' }, 'base_model: unknown model "gpt-99"'],
      [{ name: 'x', environment_id: 'short' }, 'environment_id: must be 22 characters'],
      [
        { name: 'x', mcp_servers: { gh: { url: 'nope' } } },
        'mcp_servers.gh.url: must be a valid URL',
      ],
      [{ name: 'x', agent_type: 'BOSS' }, 'agent_type: must be one of'],
    ];
    for (const [body, detail] of cases) {
      const res = await api.post('/agent/identities', body);
      expect({ status: res.status, detail: res.body.detail }).toEqual({
        status: 400,
        detail: expect.stringContaining(detail),
      });
    }
    const agent = await createAgent({ name: 'Keeper' });
    const both = await api.put(`/agent/identities/${agent.uid}`, {
      name: 'Other',
      secrets_append: [{ name: 'A' }],
    });
    expect(both.status).toBe(400);
    expect(both.body.detail).toContain('secrets_append: must be sent alone');
    expect((await api.put(`/agent/identities/${agent.uid}`, { name: '' })).status).toBe(400);
    expect((await api.get('/agent/identities')).body.agents).toEqual([
      expect.objectContaining({ name: 'Keeper' }),
    ]);
    await deleteAll();
  });

  it('lets only human callers manage agents; agent keys get 403', async () => {
    const agent = await createAgent({ name: 'Bot' });
    const created = await api.post(`/agent/identities/${agent.uid}/api-keys`, { name: 'ci' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'ci', key: expect.stringMatching(/^amb_/) });
    const bot = apiClient(app.baseUrl, created.body.key);

    const refused = await Promise.all([
      bot.get('/agent/identities'),
      bot.post('/agent/identities', { name: 'Minion' }),
      bot.get(`/agent/identities/${agent.uid}`),
      bot.put(`/agent/identities/${agent.uid}`, { name: 'Renamed' }),
      bot.delete(`/agent/identities/${agent.uid}`),
      bot.post(`/agent/identities/${agent.uid}/api-keys`, {}),
    ]);
    for (const res of refused) {
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ status: 403, detail: expect.stringContaining('human') });
    }
    // The agent's key works for everything else, e.g. reading runs.
    expect((await bot.get('/agent/runs')).status).toBe(200);
    await deleteAll();
  });

  it('manages identity keys through the API: shown once, listed without secret, revoked', async () => {
    const agent = await createAgent({ name: 'Keyed' });
    const first = await api.post(`/agent/identities/${agent.uid}/api-keys`, {});
    const second = await api.post(`/agent/identities/${agent.uid}/api-keys`, { name: 'backup' });
    expect(first.body.name).toBe('api');
    const listed = await api.get(`/agent/identities/${agent.uid}/api-keys`);
    expect(listed.body.api_keys).toEqual([
      {
        id: first.body.id,
        name: 'api',
        prefix: first.body.prefix,
        created_at: first.body.created_at,
        last_used_at: null,
        revoked_at: null,
      },
      expect.objectContaining({ id: second.body.id, name: 'backup' }),
    ]);
    expect(JSON.stringify(listed.body)).not.toContain(first.body.key);

    const firstKey = apiClient(app.baseUrl, first.body.key);
    expect((await firstKey.get('/agent/runs')).status).toBe(200);
    const revoked = await api.delete(`/agent/identities/${agent.uid}/api-keys/${first.body.id}`);
    expect(revoked.status).toBe(204);
    expect((await firstKey.get('/agent/runs')).status).toBe(401);
    expect((await apiClient(app.baseUrl, second.body.key).get('/agent/runs')).status).toBe(200);
    expect((await api.delete(`/agent/identities/${agent.uid}/api-keys/nope`)).status).toBe(404);
    await deleteAll();
  });

  it('keeps teams apart', async () => {
    const agent = await createAgent({ name: 'Ours' });
    const other = await teams.createTeam('other-team');
    const admin = await teams.createUser(other, { displayName: 'Them', role: 'admin' });
    const { key } = await app.ambient.app.get(ApiKeysService).create(admin, 'test');
    const them = apiClient(app.baseUrl, key);
    expect((await them.get('/agent/identities')).body.agents).toEqual([]);
    expect((await them.get(`/agent/identities/${agent.uid}`)).status).toBe(404);
    expect((await them.delete(`/agent/identities/${agent.uid}`)).status).toBe(404);
    const run = await them.post('/agent/runs', { prompt: 'x', agent_identity_uid: agent.uid });
    expect(run.status).toBe(400);
    await deleteAll();
  });
});
