import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GitHttpServer, startGitHttpServer } from './support/git-http-server';
import { bareRepo } from './support/git-repos';
import { useTestApp } from './support/use-test-app';
import { waitFor } from './support/wait';

const TOKEN = 'ghp_private_test_token_123';

describe('private repositories: the team secret GITHUB_TOKEN authenticates clones', () => {
  let git: GitHttpServer;
  const gitRoot = mkdtempSync(join(tmpdir(), 'ambient-private-git-'));

  beforeAll(async () => {
    bareRepo(gitRoot, 'acme', 'private', { 'SECRET.md': 'internal\n' });
    git = await startGitHttpServer(gitRoot, TOKEN);
  });

  const { model, env, api } = useTestApp('envprivate', ['api', 'worker'], () => ({
    'environments.gitUrlBase': git.url,
  }));

  afterAll(async () => {
    await git?.close();
    rmSync(gitRoot, { recursive: true, force: true });
  });

  const runIn = async (environmentUid: string) => {
    const created = await api.post('/agent/runs', {
      prompt: 'go',
      config: { environment_id: environmentUid },
    });
    return waitFor(
      async () => (await api.get(`/agent/runs/${created.body.run_id}`)).body,
      (r) => ['SUCCEEDED', 'FAILED', 'ERROR'].includes(r.state),
      { what: 'the run to finish' },
    );
  };

  it('fails without the secret and clones with it, never exposing it to setup commands', async () => {
    const environment = await api.post('/agent/environments', {
      name: 'private',
      github_repos: [{ owner: 'acme', repo: 'private' }],
      setup_commands: ['env > seen-env.txt'],
    });
    const refused = await runIn(environment.body.uid);
    expect(refused.state).toBe('FAILED');
    expect(refused.status_message.error_code).toBe('environment_setup_failed');
    expect(refused.status_message.message).toContain('cloning acme/private exited with code 128');

    const secret = await api.post('/secrets', { name: 'GITHUB_TOKEN', value: TOKEN });
    expect(secret.status).toBe(201);
    const cloned = await runIn(environment.body.uid);
    expect(cloned.state).toBe('SUCCEEDED');
    const dir = join(env.workspaceRoot, cloned.run_id);
    expect(readFileSync(join(dir, 'private', 'SECRET.md'), 'utf8')).toBe('internal\n');
    expect(git.authorizations).toContain(
      `Basic ${Buffer.from(`x-access-token:${TOKEN}`).toString('base64')}`,
    );
    expect(readFileSync(join(dir, 'seen-env.txt'), 'utf8')).not.toContain(
      Buffer.from(`x-access-token:${TOKEN}`).toString('base64'),
    );
    // The checkout's own config does not keep the token either.
    expect(readFileSync(join(dir, 'private', '.git', 'config'), 'utf8')).not.toContain(
      'Authorization',
    );
  });

  it('gives setup commands and the agent the secrets listed in config.secrets, and only those', async () => {
    expect((await api.post('/secrets', { name: 'NPM_TOKEN', value: 'npm-secret' })).status).toBe(
      201,
    );
    const environment = await api.post('/agent/environments', {
      name: 'with-secrets',
      setup_commands: ['env > setup-env.txt'],
    });
    model.script('env-dump', [
      { toolCalls: [{ name: 'run_command', arguments: { command: 'env > agent-env.txt' } }] },
      { text: 'Dumped.' },
    ]);
    const created = await api.post('/agent/runs', {
      prompt: 'dump [script:env-dump]',
      config: {
        environment_id: environment.body.uid,
        secrets: [{ name: 'NPM_TOKEN' }, { name: 'NOT_A_SECRET' }],
      },
    });
    const done = await waitFor(
      async () => (await api.get(`/agent/runs/${created.body.run_id}`)).body,
      (r) => ['SUCCEEDED', 'FAILED', 'ERROR'].includes(r.state),
      { what: 'the run to finish' },
    );
    expect(done.state).toBe('SUCCEEDED');
    for (const file of ['setup-env.txt', 'agent-env.txt']) {
      const seen = readFileSync(join(env.workspaceRoot, done.run_id, file), 'utf8');
      expect(seen).toContain('NPM_TOKEN=npm-secret\n');
      expect(seen).not.toContain('NOT_A_SECRET');
      // Secrets the run does not list (the git token) stay out.
      expect(seen).not.toContain(TOKEN);
    }
  });
});
