import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiKeysService } from '../src/modules/teams/api-keys.service';
import { TeamsService } from '../src/modules/teams/teams.service';
import { runCli } from './support/cli-process';
import { apiClient } from './support/api-client';
import { bareRepo } from './support/git-repos';
import { useTestApp } from './support/use-test-app';
import { waitFor } from './support/wait';

describe('environments: management, access and workspace preparation', () => {
  let them: ReturnType<typeof apiClient>;
  let theirTeamId: string;
  let theirKey: string;
  let owner: { teamId: string; userId: string };
  const gitRoot = mkdtempSync(join(tmpdir(), 'ambient-git-'));

  beforeAll(async () => {
    bareRepo(gitRoot, 'acme', 'widgets', { 'README.md': 'widgets\n', 'src/a.txt': 'A\n' });
  });

  const { model, env, app, api } = useTestApp('environments', ['api', 'worker'], {
    'environments.gitUrlBase': gitRoot,
  });

  beforeAll(async () => {
    owner = (await app.ambient.app.get(ApiKeysService).authenticate(app.apiKey))!;
    await app.dataSource.query('UPDATE users SET email = ? WHERE id = ?', [
      'admin@acme.test',
      owner.userId,
    ]);
    // Edited behind the server's back: announced as a change of the user would be.
    await app.ambient.app.get(ApiKeysService).userChanged(owner.userId);
    const teams = app.ambient.app.get(TeamsService);
    const other = await teams.createTeam('guests');
    theirTeamId = other.id;
    const admin = await teams.createUser(other, { displayName: 'Guest', role: 'admin' });
    theirKey = (await app.ambient.app.get(ApiKeysService).create(admin, 't')).key;
    them = apiClient(app.baseUrl, theirKey);
  });

  afterAll(async () => {
    rmSync(gitRoot, { recursive: true, force: true });
  });

  const patch = (path: string, body: object) =>
    api.raw().patch(`${api.prefix}${path}`).set('Authorization', `Bearer ${app.apiKey}`).send(body);

  const finished = (runId: string, client = api) =>
    waitFor(
      async () => (await client.get(`/agent/runs/${runId}`)).body,
      (run) => ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(run.state),
      { what: `run ${runId} to finish` },
    );

  const eventTypes = async (runId: string) =>
    (await api.get(`/agent/runs/${runId}/timeline`)).body.events.map(
      (e: { event_type: string }) => e.event_type,
    );

  it('creates, lists (both sort orders), updates and deletes environments', async () => {
    const b = await api.post('/agent/environments', { name: 'beta', setup_commands: ['true'] });
    expect(b.status).toBe(201);
    expect(b.body).toMatchObject({
      uid: expect.stringMatching(/^[A-Za-z0-9]{22}$/),
      config: {
        name: 'beta',
        description: null,
        github_repos: [],
        setup_commands: ['true'],
        failure_session_retention_minutes: null,
      },
      setup_failed: false,
      last_updated: expect.any(String),
      scope: { type: 'Team', uid: owner.teamId },
      access: 'owner',
      creator: { uid: owner.userId, display_name: 'Admin', email: 'admin@acme.test', type: 'user' },
      last_editor: { uid: owner.userId, display_name: 'Admin', type: 'user' },
    });
    const a = await api.post('/agent/environments', {
      name: 'alpha',
      github_repos: [{ owner: 'acme', repo: 'widgets' }],
    });
    expect(a.status).toBe(201);
    const byName = await api.get('/agent/environments?sort_by=name');
    expect(byName.body.environments.map((e: { uid: string }) => e.uid)).toEqual([
      a.body.uid,
      b.body.uid,
    ]);
    const nameless = await patch(`/agent/environments/${b.body.uid}`, { name: null });
    expect(nameless.status).toBe(400);
    expect(nameless.body.detail).toContain('name');
    expect((await patch('/agent/environments/AAAAAAAAAAAAAAAAAAAAAA', { name: 'x' })).status).toBe(
      404,
    );
    const changed = await patch(`/agent/environments/${b.body.uid}`, { description: 'second' });
    expect(changed.status).toBe(200);
    expect(changed.body.config).toMatchObject({ name: 'beta', description: 'second' });
    const byUpdate = await api.get('/agent/environments');
    expect(byUpdate.body.environments[0].uid).toBe(b.body.uid);

    expect((await api.delete(`/agent/environments/${b.body.uid}`)).status).toBe(204);
    expect((await api.get(`/agent/environments/${b.body.uid}`)).status).toBe(404);
    await api.delete(`/agent/environments/${a.body.uid}`);
  });

  it('rejects bad input naming the field and changes nothing', async () => {
    const cases: [object, string][] = [
      [{}, 'name'],
      [{ name: 'x', github_repos: [{ owner: '../etc', repo: 'r' }] }, 'owner'],
      [{ name: 'x', failure_session_retention_minutes: 61 }, 'failure_session_retention_minutes'],
      [
        {
          name: 'x',
          github_repos: [
            { owner: 'a', repo: 'web' },
            { owner: 'b', repo: 'web' },
          ],
        },
        'github_repos',
      ],
    ];
    for (const [body, field] of cases) {
      const res = await api.post('/agent/environments', body);
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body)).toContain(field);
    }
    expect((await api.get('/agent/environments?sort_by=size')).status).toBe(400);
    expect((await api.get('/agent/environments')).body.environments).toEqual([]);
  });

  it('shares with another team by grant and by link; guests can use but not change it', async () => {
    const created = await api.post('/agent/environments', { name: 'shared' });
    const uid = created.body.uid;
    expect((await them.get(`/agent/environments/${uid}`)).status).toBe(404);
    expect(
      (await them.post('/agent/runs', { prompt: 'x', config: { environment_id: uid } })).status,
    ).toBe(400);

    expect(
      (await api.post(`/agent/environments/${uid}/grants`, { team_id: theirTeamId })).status,
    ).toBe(204);
    expect((await them.get('/agent/environments')).body.environments).toEqual([]);
    expect((await them.post(`/agent/environments/${uid}/accept`, { version: 1 })).status).toBe(200);
    const listed = await them.get('/agent/environments');
    expect(listed.body.environments).toEqual([
      expect.objectContaining({ uid, scope: { type: 'Team', uid: owner.teamId }, access: 'guest' }),
    ]);
    expect(listed.body.environments[0].creator).toEqual({
      uid: owner.userId,
      display_name: 'Admin',
      type: 'user',
    });
    expect((await them.delete(`/agent/environments/${uid}`)).status).toBe(403);
    expect((await api.delete(`/agent/environments/${uid}/grants/${theirTeamId}`)).status).toBe(204);
    expect((await them.get('/agent/environments')).body.environments).toEqual([]);

    const link = await api.post(`/agent/environments/${uid}/share-link`);
    expect(link.body.share_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await them.post('/agent/environments/shared/wrong/accept')).status).toBe(404);
    const accepted = await them.post(`/agent/environments/shared/${link.body.share_token}/accept`);
    expect(accepted.status).toBe(200);
    expect(accepted.body).toMatchObject({
      uid,
      scope: { type: 'Team', uid: owner.teamId },
      access: 'guest',
    });
    const run = await them.post('/agent/runs', { prompt: 'hi', config: { environment_id: uid } });
    expect(run.status).toBe(200);
    expect((await finished(run.body.run_id, them)).state).toBe('SUCCEEDED');
    await api.delete(`/agent/environments/${uid}`);
  });

  it('clones the repositories and runs setup commands before the agent starts', async () => {
    const created = await api.post('/agent/environments', {
      name: 'widgets',
      github_repos: [{ owner: 'acme', repo: 'widgets' }],
      setup_commands: ['cat widgets/src/a.txt > setup.log', 'echo two >> setup.log'],
    });
    const run = await api.post('/agent/runs', {
      prompt: 'go',
      config: { environment_id: created.body.uid },
    });
    const done = await finished(run.body.run_id);
    expect(done.state).toBe('SUCCEEDED');
    const dir = join(env.workspaceRoot, done.run_id);
    expect(readFileSync(join(dir, 'widgets', 'README.md'), 'utf8')).toBe('widgets\n');
    expect(readFileSync(join(dir, 'setup.log'), 'utf8')).toBe('A\ntwo\n');
    const types = await eventTypes(done.run_id);
    expect(types.indexOf('worker_container_ready')).toBeGreaterThan(
      types.indexOf('setup_command_succeeded'),
    );
    expect(types).toContain('repository_cloned');
    const listed = await api.get(`/agent/environments/${created.body.uid}`);
    expect(listed.body).toMatchObject({
      setup_failed: false,
      last_task_created: { id: done.run_id, state: 'SUCCEEDED' },
    });
  });

  it('fails the run with environment_setup_failed, the exit code and last output lines', async () => {
    const created = await api.post('/agent/environments', {
      name: 'broken',
      setup_commands: ['echo preparing', 'echo first line; echo boom >&2; exit 3', 'touch never'],
    });
    const run = await api.post('/agent/runs', {
      prompt: 'go',
      config: { environment_id: created.body.uid },
    });
    const done = await finished(run.body.run_id);
    expect(done.state).toBe('FAILED');
    expect(done.status_message).toMatchObject({
      error_code: 'environment_setup_failed',
      exit_code: 3,
      retryable: false,
    });
    expect(done.status_message.message).toContain('setup command 2');
    expect(done.status_message.message).toContain('exited with code 3');
    expect(done.status_message.message).toContain('first line\nboom');
    expect(done.status_message.session_debug_until).toBeUndefined();
    expect(existsSync(join(env.workspaceRoot, done.run_id))).toBe(false);
    expect(await eventTypes(done.run_id)).not.toContain('worker_container_ready');
    const after = await api.get(`/agent/environments/${created.body.uid}`);
    expect(after.body.setup_failed).toBe(true);

    // Fixed, the next setup succeeds and clears the flag.
    const fixed = await api.patch(`/agent/environments/${created.body.uid}`, {
      setup_commands: ['echo preparing'],
    });
    expect(fixed.status).toBe(200);
    const again = await api.post('/agent/runs', {
      prompt: 'go',
      config: { environment_id: created.body.uid },
    });
    expect((await finished(again.body.run_id)).state).toBe('SUCCEEDED');
    const recovered = await api.get(`/agent/environments/${created.body.uid}`);
    expect(recovered.body.setup_failed).toBe(false);
  });

  it('fails a run whose repository cannot be cloned', async () => {
    const created = await api.post('/agent/environments', {
      name: 'missing',
      github_repos: [{ owner: 'acme', repo: 'nope' }],
    });
    const run = await api.post('/agent/runs', {
      prompt: 'go',
      config: { environment_id: created.body.uid },
    });
    const done = await finished(run.body.run_id);
    expect(done.state).toBe('FAILED');
    expect(done.status_message.error_code).toBe('environment_setup_failed');
    expect(done.status_message.message).toContain('cloning acme/nope exited with code 128');
  });

  it('cancels a run during setup without blaming the environment', async () => {
    const created = await api.post('/agent/environments', {
      name: 'slow-setup',
      setup_commands: ['sleep 60'],
    });
    const run = await api.post('/agent/runs', {
      prompt: 'go',
      config: { environment_id: created.body.uid },
    });
    await waitFor(
      () => eventTypes(run.body.run_id),
      (types) => types.includes('environment_setup_started'),
      { what: 'the setup to start' },
    );
    expect((await api.post(`/agent/runs/${run.body.run_id}/cancel`)).status).toBe(200);
    expect((await finished(run.body.run_id)).state).toBe('CANCELLED');
    expect((await api.get(`/agent/environments/${created.body.uid}`)).body.setup_failed).toBe(
      false,
    );
  });

  describe('secrets and providers', () => {
    const count = async () => (await api.get('/agent/environments')).body.environments.length;
    const gcp = {
      project_number: '123456789012',
      workload_identity_federation_pool_id: 'ci-pool',
      workload_identity_federation_provider_id: 'github',
    };

    beforeAll(async () => {
      for (const [name, value] of [
        ['NPM_TOKEN', 'npm-secret-value'],
        ['RUN_ONLY', 'run-only-value'],
      ]) {
        expect((await api.post('/secrets', { name, value })).status).toBe(201);
      }
    });

    it('rejects unknown or repeated secrets and incomplete providers, naming the field', async () => {
      const before = await count();
      const cases: [object, RegExp][] = [
        [{ secrets: [{ name: 'NPM_TOKEN' }, { name: 'NOPE' }] }, /^secrets\.1\.name: .*"NOPE"/],
        [{ secrets: [{ name: 'NPM_TOKEN' }, { name: 'NPM_TOKEN' }] }, /^secrets\.1\.name: .*twice/],
        [{ secrets: [{}] }, /^secrets\.0\.name:/],
        [{ providers: { aws: {} } }, /^providers\.aws\.role_arn:/],
        [
          { providers: { gcp: { ...gcp, workload_identity_federation_pool_id: undefined } } },
          /^providers\.gcp\.workload_identity_federation_pool_id:/,
        ],
        [
          { providers: { gcp: { ...gcp, project_number: 'my-project' } } },
          /^providers\.gcp\.project_number:/,
        ],
      ];
      for (const [fields, detail] of cases) {
        const res = await api.post('/agent/environments', { name: 'bad', ...fields });
        expect(res.status).toBe(400);
        expect(res.body.detail).toMatch(detail);
      }
      expect(await count()).toBe(before);
    });

    it('stores and echoes them; null clears; a secret in use cannot be deleted', async () => {
      const created = await api.post('/agent/environments', {
        name: 'clouds',
        secrets: [{ name: 'NPM_TOKEN' }],
        providers: { aws: { role_arn: 'arn:aws:iam::123456789012:role/ci' }, gcp },
      });
      expect(created.status).toBe(201);
      const uid = created.body.uid;
      const expected = {
        secrets: [{ name: 'NPM_TOKEN' }],
        providers: { aws: { role_arn: 'arn:aws:iam::123456789012:role/ci' }, gcp },
      };
      expect(created.body.config).toMatchObject(expected);
      expect((await api.get(`/agent/environments/${uid}`)).body.config).toMatchObject(expected);

      const inUse = await api.delete('/secrets/NPM_TOKEN');
      expect(inUse.status).toBe(409);
      expect(inUse.body.detail).toContain('used by environment(s) clouds');

      const bad = await patch(`/agent/environments/${uid}`, { secrets: [{ name: 'NOPE' }] });
      expect(bad.status).toBe(400);
      const cleared = await patch(`/agent/environments/${uid}`, { providers: null, secrets: null });
      expect(cleared.status).toBe(200);
      expect(cleared.body.config.secrets).toEqual([]);
      expect(cleared.body.config).not.toHaveProperty('providers');
      expect((await api.delete(`/agent/environments/${uid}`)).status).toBe(204);
    });

    it("gives the environment's and the run's secrets to setup and agent commands as variables", async () => {
      const environment = await api.post('/agent/environments', {
        name: 'with-secrets',
        secrets: [{ name: 'NPM_TOKEN' }],
        setup_commands: ['printf "%s|%s" "$NPM_TOKEN" "$RUN_ONLY" > setup-saw.txt'],
      });
      model.script('secret-env', [
        {
          toolCalls: [
            {
              name: 'run_command',
              arguments: { command: 'printf "%s|%s" "$NPM_TOKEN" "$RUN_ONLY" > agent-saw.txt' },
            },
          ],
        },
        { text: 'Looked.' },
      ]);
      const created = await api.post('/agent/runs', {
        prompt: 'Look at the environment [script:secret-env]',
        config: { environment_id: environment.body.uid, secrets: [{ name: 'RUN_ONLY' }] },
      });
      const run = await finished(created.body.run_id);
      expect(run.state).toBe('SUCCEEDED');
      const workspace = join(env.workspaceRoot, run.run_id);
      expect(readFileSync(join(workspace, 'setup-saw.txt'), 'utf8')).toBe(
        'npm-secret-value|run-only-value',
      );
      expect(readFileSync(join(workspace, 'agent-saw.txt'), 'utf8')).toBe(
        'npm-secret-value|run-only-value',
      );

      // A guest team's run gets none of the environment's secrets (names the owner chose).
      await api.post(`/agent/environments/${environment.body.uid}/grants`, {
        team_id: theirTeamId,
      });
      await them.post(`/agent/environments/${environment.body.uid}/accept`, { version: 1 });
      const guest = await them.post('/agent/runs', {
        prompt: 'x',
        config: { environment_id: environment.body.uid },
      });
      const skipped = await finished(guest.body.run_id, them);
      expect(skipped.state).toBe('SUCCEEDED');
      const guestTimeline = (await them.get(`/agent/runs/${guest.body.run_id}/timeline`)).body;
      expect(JSON.stringify(guestTimeline)).toContain('secrets_skipped');
      expect(JSON.stringify(guestTimeline)).toContain(
        `environment ${environment.body.uid} secrets.0.name`,
      );

      const missing = await api.post('/agent/runs', {
        prompt: 'x',
        config: { secrets: [{ name: 'GONE' }] },
      });
      const gone = await finished(missing.body.run_id);
      expect(gone.state).toBe('SUCCEEDED');
      const timeline = JSON.stringify((await api.get(`/agent/runs/${gone.run_id}/timeline`)).body);
      expect(timeline).toContain('"name":"GONE"');
      expect(timeline).toContain('config.secrets.0.name');
    });
  });

  it('is managed from the CLI', async () => {
    const cli = (args: string[]) =>
      runCli(args, {
        ...env.childEnv(),
        AMBIENT_API_URL: app.baseUrl,
        AMBIENT_API_KEY: app.apiKey,
      });
    expect((await api.post('/secrets', { name: 'CLI_SECRET', value: 'v' })).status).toBe(201);
    const created = await cli([
      'environments',
      'create',
      '--name',
      'from-cli',
      '--repos',
      'acme/widgets',
      '--setup-commands-json',
      '["make setup"]',
      '--secrets',
      'CLI_SECRET',
      '--providers-json',
      '{"aws":{"role_arn":"arn:aws:iam::123456789012:role/cli"}}',
    ]);
    expect(created.code).toBe(0);
    const uid = JSON.parse(created.stdout).uid as string;
    const got = await api.get(`/agent/environments/${uid}`);
    expect(got.body.config).toMatchObject({
      name: 'from-cli',
      github_repos: [{ owner: 'acme', repo: 'widgets' }],
      setup_commands: ['make setup'],
      secrets: [{ name: 'CLI_SECRET' }],
      providers: { aws: { role_arn: 'arn:aws:iam::123456789012:role/cli' } },
    });
    expect((await cli(['environments', 'grant', '--uid', uid, '--team', theirTeamId])).code).toBe(
      0,
    );
    expect((await them.get(`/agent/environments/${uid}`)).status).toBe(404);
    const theirCli = (args: string[]) =>
      runCli(args, { ...env.childEnv(), AMBIENT_API_URL: app.baseUrl, AMBIENT_API_KEY: theirKey });
    const pending = await theirCli(['environments', 'pending']);
    expect(JSON.parse(pending.stdout).environments).toEqual([
      expect.objectContaining({ uid, version: 1, accepted_version: null }),
    ]);
    expect((await theirCli(['environments', 'accept', '--uid', uid, '--version', '1'])).code).toBe(
      0,
    );
    expect((await them.get(`/agent/environments/${uid}`)).status).toBe(200);
    const revoked = await cli([
      'environments',
      'grant',
      '--uid',
      uid,
      '--team',
      theirTeamId,
      '--revoke',
    ]);
    expect(revoked.code).toBe(0);
    expect((await them.get(`/agent/environments/${uid}`)).status).toBe(404);
    // A share token handed over out of band: the other team accepts it with its own key.
    const shared = await cli(['environments', 'share', '--uid', uid]);
    expect(shared.code).toBe(0);
    const accepted = await theirCli(['environments', 'accept', '--token', shared.stdout.trim()]);
    expect(accepted.code).toBe(0);
    expect(JSON.parse(accepted.stdout)).toMatchObject({ uid });
    expect((await them.get(`/agent/environments/${uid}`)).status).toBe(200);
    const listed = await cli(['environments', 'list', '--sort-by', 'name']);
    expect(listed.stdout).toContain(`${uid}  from-cli  (owner)`);
    expect((await cli(['environments', 'update', '--uid', uid, '--name', 'renamed'])).code).toBe(0);
    expect((await api.get(`/agent/environments/${uid}`)).body.config.name).toBe('renamed');
    expect((await cli(['environments', 'update', '--uid', uid, '--secrets', ''])).code).toBe(0);
    expect((await api.get(`/agent/environments/${uid}`)).body.config.secrets).toEqual([]);
    expect((await theirCli(['environments', 'decline', '--uid', uid])).code).toBe(0);
    expect((await them.get(`/agent/environments/${uid}`)).status).toBe(404);
    expect((await cli(['environments', 'delete', '--uid', uid])).code).toBe(0);
    expect((await api.get(`/agent/environments/${uid}`)).status).toBe(404);
  }, 240_000); // a dozen CLI processes, each compiling TypeScript at start (≈ 5–15 s under load)
});
