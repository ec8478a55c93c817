import { apiClient } from '../support/api-client';
import { runCli } from '../support/cli-process';
import { createWorkerCredential, RawWorkerClient } from '../support/raw-worker-client';
import { useTestApp } from '../support/use-test-app';
import { waitFor } from '../support/wait';
import { createFactory, createWebhook } from '../support/webhook-helpers';

/**
 * A team secret goes only to the runs its admin meant: a scoped secret only to runs in its
 * environments, as its agent identities or for its schedules, and a webhook's signing secret or
 * URL token to none. A run naming one it may not have is refused at creation (400 naming the
 * field, nothing created); at execution the secret does not resolve either.
 */
describe('security: secret scopes', () => {
  const { env, app, api } = useTestApp(
    'sec-secret-scopes',
    ['api', 'scheduler'],
    {
      'schedules.tickIntervalMs': 100,
    },
    { model: false },
  );
  let member: ReturnType<typeof apiClient>;
  let envA: string;
  let envB: string;

  beforeAll(async () => {
    const key = await api.post('/api-keys', { name: 'member', role: 'member' });
    expect(key.status).toBe(201);
    member = apiClient(app.baseUrl, key.body.key as string);
    envA = (await api.post('/agent/environments', { name: 'deploys' })).body.uid as string;
    envB = (await api.post('/agent/environments', { name: 'scratch' })).body.uid as string;
  });

  const runCount = async () =>
    ((await app.dataSource.query('SELECT COUNT(*) AS n FROM runs')) as { n: string }[])[0].n;
  const refusedRun = async (as: ReturnType<typeof apiClient>, config: Record<string, unknown>) => {
    const before = await runCount();
    const res = await as.post('/agent/runs', { prompt: 'Print the secret', config });
    expect(res.status).toBe(400);
    expect(await runCount()).toBe(before);
    return res.body as { detail: string };
  };

  it("refuses a run naming a webhook's URL token, by config.secrets or an MCP reference", async () => {
    const factory = await createFactory(api);
    const hook = await createWebhook(api, factory, { name: 'deploys', auth_mode: 'url_token' });
    const named = await refusedRun(member, { secrets: [{ name: hook.secret_name }] });
    expect(named.detail).toBe(
      `config.secrets.0.name: secret "${hook.secret_name}" is a webhook's signing secret; runs never get it`,
    );
    const referenced = await refusedRun(member, {
      mcp_servers: {
        leak: { url: 'https://mcp.example.test/', headers: { X: { secret: hook.secret_name } } },
      },
    });
    expect(referenced.detail).toMatch(
      /^config\.mcp_servers\.leak\.headers\.X\.secret: secret "WEBHOOK_DEPLOYS_SECRET" is a webhook's/,
    );
    const harness = await refusedRun(member, {
      harness_auth_secrets: { claude_auth_secret_name: hook.secret_name },
    });
    expect(harness.detail).toMatch(/^config\.harness_auth_secrets\.claude_auth_secret_name: /);
    // Members still see that it exists, marked as the webhook's.
    const listed = await member.get('/secrets');
    expect(listed.body.secrets).toContainEqual(
      expect.objectContaining({ name: hook.secret_name, purpose: 'webhook' }),
    );
  });

  it('gives a scoped secret only to runs in its environments; unscoped ones stay as before', async () => {
    const scoped = await api.post('/secrets', {
      name: 'DEPLOY_TOKEN',
      value: 'deploy-token-value-1',
      scope: { environments: [envA] },
    });
    expect(scoped.status).toBe(201);
    expect(scoped.body.scope).toEqual({
      environments: [envA],
      agent_identities: [],
      schedules: [],
    });
    expect((await api.post('/secrets', { name: 'SHARED_TOKEN', value: 'shared-1' })).status).toBe(
      201,
    );

    const outside = await refusedRun(member, {
      secrets: [{ name: 'SHARED_TOKEN' }, { name: 'DEPLOY_TOKEN' }],
    });
    expect(outside.detail).toBe(
      `config.secrets.1.name: secret "DEPLOY_TOKEN" is limited to environments ${envA}, and this run is none of them`,
    );
    await refusedRun(member, { environment_id: envB, secrets: [{ name: 'DEPLOY_TOKEN' }] });
    const inside = await member.post('/agent/runs', {
      prompt: 'Deploy',
      config: { environment_id: envA, secrets: [{ name: 'DEPLOY_TOKEN' }] },
    });
    expect(inside.status).toBe(200);
    const unscoped = await member.post('/agent/runs', {
      prompt: 'Use the shared one',
      config: { secrets: [{ name: 'SHARED_TOKEN' }] },
    });
    expect(unscoped.status).toBe(200);
  });

  it('lets only admins set a scope, of ids the team has, and says which is unknown', async () => {
    expect(
      (await member.post('/secrets', { name: 'MINE', value: 'v', scope: { environments: [envA] } }))
        .status,
    ).toBe(403);
    const unknown = await api.post('/secrets', {
      name: 'BAD_SCOPE',
      value: 'v',
      scope: { environments: [envA], schedules: ['no-such-schedule'] },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.detail).toBe(
      'scope.schedules.0: the team has no schedule "no-such-schedule"',
    );
    const unknownAgent = await api.post('/secrets', {
      name: 'BAD_AGENT_SCOPE',
      value: 'v',
      scope: { agent_identities: ['no-such-agent'] },
    });
    expect(unknownAgent.status).toBe(400);
    expect(unknownAgent.body.detail).toBe(
      'scope.agent_identities.0: the team has no agent identity "no-such-agent"',
    );
    // Text no id can hold is unknown too, never a server error (found by the API fuzz).
    for (const key of ['environments', 'agent_identities', 'schedules']) {
      const odd = await api.post('/secrets', {
        name: 'ODD_SCOPE',
        value: 'v',
        scope: { [key]: ['\u{79254}渰'] },
      });
      expect(odd.status).toBe(400);
      expect(odd.body.detail).toMatch(new RegExp(`^scope\\.${key}\\.0: the team has no `));
    }
    expect(
      (await api.get('/secrets')).body.secrets.map((s: { name: string }) => s.name),
    ).not.toContain('BAD_SCOPE');
    const cleared = await api.put('/secrets/DEPLOY_TOKEN', { scope: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body.scope).toBeNull();
    const narrowed = await api.put('/secrets/DEPLOY_TOKEN', { scope: { environments: [envA] } });
    expect(narrowed.body.scope).toEqual({
      environments: [envA],
      agent_identities: [],
      schedules: [],
    });

    // The CLI sets and lifts a scope without touching the value.
    const cli = (...args: string[]) =>
      runCli(args, {
        ...env.childEnv(),
        AMBIENT_API_URL: app.baseUrl,
        AMBIENT_API_KEY: app.apiKey,
      });
    const viaCli = await cli(
      'secrets',
      'update',
      '--name',
      'DEPLOY_TOKEN',
      '--environments',
      `${envA},${envB}`,
    );
    expect(viaCli.code).toBe(0);
    expect(JSON.parse(viaCli.stdout).scope).toEqual({
      environments: [envA, envB],
      agent_identities: [],
      schedules: [],
    });
    const lifted = await cli('secrets', 'update', '--name', 'DEPLOY_TOKEN', '--unscoped');
    expect(JSON.parse(lifted.stdout).scope).toBeNull();
    expect(
      (await api.put('/secrets/DEPLOY_TOKEN', { scope: { environments: [envA] } })).status,
    ).toBe(200);
  });

  it("fails a schedule's firing visibly while its secret is out of scope, and fires once in scope", async () => {
    await api.post('/secrets', {
      name: 'NIGHTLY_TOKEN',
      value: 'nightly-1',
      scope: { environments: [envA] },
    });
    const schedule = await member.post('/agent/schedules', {
      name: 'Nightly',
      cron_schedule: '@every 1s',
      prompt: 'Use the nightly token',
      agent_config: { secrets: [{ name: 'NIGHTLY_TOKEN' }] },
    });
    expect(schedule.status).toBe(201);
    const failing = await waitFor(
      async () => (await member.get(`/agent/schedules/${schedule.body.id}`)).body,
      (item) => item.last_spawn_error !== null,
      { what: 'the spawn error to be recorded' },
    );
    expect(failing.last_spawn_error).toContain(
      'config.secrets.0.name: secret "NIGHTLY_TOKEN" is limited to environments',
    );

    const scoped = await api.put('/secrets/NIGHTLY_TOKEN', {
      scope: { environments: [envA], schedules: [schedule.body.id] },
    });
    expect(scoped.status).toBe(200);
    await waitFor(
      async () =>
        (await member.get(`/agent/runs?schedule_id=${schedule.body.id}`)).body.runs as unknown[],
      (runs) => runs.length > 0,
      { what: 'a run of the schedule once the secret is in scope' },
    );
    await member.post(`/agent/schedules/${schedule.body.id}/pause`);
  });

  it('does not resolve a secret at execution once its scope no longer covers the run', async () => {
    await api.post('/secrets', { name: 'LATE_TOKEN', value: 'late-token-value-1' });
    const created = await member.post('/agent/runs', {
      prompt: 'Run remotely',
      config: { worker_host: 'scope-box', secrets: [{ name: 'LATE_TOKEN' }] },
    });
    expect(created.status).toBe(200);
    expect((await api.put('/secrets/LATE_TOKEN', { scope: { environments: [envA] } })).status).toBe(
      200,
    );

    const { credential } = await createWorkerCredential(api, 'scope-box');
    const worker = await RawWorkerClient.connect(app.baseUrl, credential, 'scope-box');
    try {
      const offered = await worker.next('task_assignment');
      const runKey = (offered.data.env_vars as Record<string, string>).WARP_API_KEY;
      worker.send('task_claimed', { task_id: created.body.run_id });
      const start = await api
        .raw()
        .post(`${api.prefix}/harness-support/start`)
        .set('Authorization', `Bearer ${runKey}`);
      expect(start.status).toBe(200);
      expect(start.body.run_secrets).toEqual({});
      expect(JSON.stringify(start.body)).not.toContain('late-token-value-1');
      const timeline = await member.get(`/agent/runs/${created.body.run_id}/timeline`);
      expect(JSON.stringify(timeline.body)).toContain('is limited to environments');
    } finally {
      worker.close();
    }
  });
});
