import { TeamsService } from '../src/modules/teams/teams.service';
import { runCli } from './support/cli-process';
import { apiClient } from './support/api-client';
import { useTestApp } from './support/use-test-app';

describe('agent identities executing runs, plan limit and CLI', () => {
  let teams: TeamsService;
  let teamId: string;

  const { env, app, api } = useTestApp('identities_runs', ['api'], {
    'identities.defaultAgentLimit': 3,
  });

  beforeAll(async () => {
    teams = app.ambient.app.get(TeamsService);
    teamId = (await teams.findByName('default'))!.id;
  });

  /** Runs the CLI as `npm run cli` does, against this file's database. */
  const cli = async (...args: string[]) => {
    const { code, stdout, stderr } = await runCli(
      args,
      env.childEnv({ AMBIENT_TEAM_AGENT_LIMIT: '3' }),
    );
    return { code, out: stdout, err: stderr };
  };

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

  it('runs with agent_identity_uid execute as the agent, with its defaults', async () => {
    const agent = await createAgent({
      name: 'Executor',
      prompt: 'Always be brief.',
      base_model: 'fake-model',
      secrets: [{ name: 'AGENT_SECRET' }],
    });
    const created = await api.post('/agent/runs', {
      prompt: 'Summarise the repo',
      agent_identity_uid: agent.uid,
      config: { secrets: [{ name: 'RUN_SECRET' }] },
    });
    expect(created.status).toBe(200);
    const run = (await api.get(`/agent/runs/${created.body.run_id}`)).body;
    expect(run.executor).toEqual({
      uid: agent.uid,
      display_name: 'Executor',
      type: 'service_account',
    });
    expect(run.creator).toMatchObject({ type: 'user' });
    expect(run.creator.uid).not.toBe(agent.uid);
    expect(run.agent_config).toMatchObject({
      base_prompt: 'Always be brief.',
      model_id: 'fake-model',
      secrets: [{ name: 'RUN_SECRET' }, { name: 'AGENT_SECRET' }],
    });

    const own = await api.post('/agent/runs', { prompt: 'Mine' });
    const byExecutor = await api.get(`/agent/runs?executor=${agent.uid}`);
    expect(byExecutor.body.runs.map((r: { run_id: string }) => r.run_id)).toEqual([
      created.body.run_id,
    ]);
    expect(byExecutor.body.runs[0].run_id).not.toBe(own.body.run_id);

    const unknown = await api.post('/agent/runs', { prompt: 'x', agent_identity_uid: 'nobody' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.detail).toContain('agent_identity_uid: unknown agent identity "nobody"');
    // Characters no uid has (outside the ASCII column's set): the same answer, not a 500.
    const outside = '\u{1F600}é'.repeat(11);
    const unreadable = await api.post('/agent/runs', { prompt: 'x', agent_identity_uid: outside });
    expect(unreadable.status).toBe(400);
    expect(unreadable.body.detail).toContain(
      `agent_identity_uid: unknown agent identity "${outside}"`,
    );

    // A run started with the agent's own key runs as the agent too.
    const key = (await api.post(`/agent/identities/${agent.uid}/api-keys`, {})).body.key;
    const fromAgent = await apiClient(app.baseUrl, key).post('/agent/runs', { prompt: 'Self' });
    const selfRun = (await api.get(`/agent/runs/${fromAgent.body.run_id}`)).body;
    expect(selfRun.creator.uid).toBe(agent.uid);
    expect(selfRun.executor.uid).toBe(agent.uid);
    await deleteAll();
  });

  it('flips `available` with the plan limit (oldest first) and refuses unavailable agents', async () => {
    const a = await createAgent({ name: 'A' });
    const b = await createAgent({ name: 'B' });
    const c = await createAgent({ name: 'C' });
    const over = await api.post('/agent/identities', { name: 'D' });
    expect(over.status).toBe(403);
    expect(over.body.detail).toContain('plan allows 3 agent identities');

    const lowered = await cli('identities', 'set-limit', '--team', 'default', '--limit', '2');
    expect(lowered.code).toBe(0);
    const availability = async () =>
      Object.fromEntries(
        (await api.get('/agent/identities')).body.agents.map(
          (x: { name: string; available: boolean }) => [x.name, x.available],
        ),
      );
    expect(await availability()).toEqual({ A: true, B: true, C: false });
    expect((await api.get(`/agent/identities/${c.uid}`)).body.available).toBe(false);

    const refused = await api.post('/agent/runs', { prompt: 'x', agent_identity_uid: c.uid });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ title: 'Agent unavailable' });
    expect(refused.body.detail).toContain("beyond the team's plan limit of 2");
    const cKey = (await api.post(`/agent/identities/${c.uid}/api-keys`, {})).body.key;
    expect((await apiClient(app.baseUrl, cKey).post('/agent/runs', { prompt: 'x' })).status).toBe(
      403,
    );
    const runsOfC = await api.get(`/agent/runs?executor=${c.uid}`);
    expect(runsOfC.body.runs).toEqual([]);

    expect((await api.delete(`/agent/identities/${a.uid}`)).status).toBe(204);
    expect(await availability()).toEqual({ B: true, C: true });
    expect((await api.post('/agent/runs', { prompt: 'x', agent_identity_uid: c.uid })).status).toBe(
      200,
    );

    // With two agents left, both limits (2, and the default of 3) list them as available.
    const [listing, reset] = await Promise.all([
      cli('identities', 'list', '--team', 'default'),
      cli('identities', 'set-limit', '--team', 'default', '--limit', 'default'),
    ]);
    expect(listing.code).toBe(0);
    expect(listing.out).toMatch(new RegExp(`^${b.uid}\\s+B\\s+yes`, 'm'));
    expect(listing.out).toMatch(new RegExp(`^${c.uid}\\s+C\\s+yes`, 'm'));
    expect(reset.code).toBe(0);
    expect(await teams.agentLimit(teamId)).toBeNull();
    await deleteAll();
  });

  it('manages identity keys with the CLI', async () => {
    const agent = await createAgent({ name: 'Cli agent' });
    const created = await cli('identity-keys', 'create', '--identity', agent.uid, '--name', 'ops');
    expect(created.code).toBe(0);
    const key = created.out.trim().split('\n').at(-1)!;
    const keyId = /\(id ([A-Za-z0-9]{22})\)/.exec(created.err)?.[1];
    const agentApi = apiClient(app.baseUrl, key);
    expect((await agentApi.get('/agent/runs')).status).toBe(200);

    const [listed, unknown] = await Promise.all([
      cli('identity-keys', 'list', '--identity', agent.uid),
      cli('identity-keys', 'create', '--identity', 'nobody'),
    ]);
    expect(listed.out).toContain(keyId);
    expect(listed.out).not.toContain(key);
    const revoked = await cli('identity-keys', 'revoke', '--identity', agent.uid, '--id', keyId!);
    expect(revoked.code).toBe(0);
    expect((await agentApi.get('/agent/runs')).status).toBe(401);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain('no agent identity with uid "nobody"');
    await deleteAll();
  });
});
