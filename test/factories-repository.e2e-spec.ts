import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { apiClient } from './support/api-client';
import { startGitHttpServer } from './support/git-http-server';
import { bareRepo, pushFiles } from './support/git-repos';
import { createTestEnvironment, startTestApp, TestApp, TestEnvironment } from './support/test-app';
import { waitFor } from './support/wait';
import { deliver } from './support/webhook-helpers';

/** A local bare repository as the definition's home; commits pushed to main apply by polling. */
class LocalRepo {
  readonly bare: string;
  private readonly work: string;

  constructor() {
    const root = mkdtempSync(join(tmpdir(), 'ambient-repo-'));
    this.bare = join(root, 'factory.git');
    this.work = join(root, 'work');
    this.git(root, 'init', '--quiet', '--bare', '--initial-branch=main', this.bare);
    this.git(root, 'init', '--quiet', '--initial-branch=main', this.work);
    this.git(this.work, 'remote', 'add', 'origin', this.bare);
  }

  /** Writes (or with null, deletes) files, commits and pushes; returns the commit. */
  commit(files: Record<string, string | null>, message = 'change'): string {
    for (const [path, content] of Object.entries(files)) {
      const full = join(this.work, path);
      if (content === null) rmSync(full, { force: true });
      else {
        mkdirSync(dirname(full), { recursive: true });
        writeFileSync(full, content);
      }
    }
    this.git(this.work, 'add', '-A');
    this.git(
      this.work,
      '-c',
      'user.name=t',
      '-c',
      'user.email=t@example.test',
      'commit',
      '--quiet',
      '-m',
      message,
    );
    this.git(this.work, 'push', '--quiet', 'origin', 'main');
    return this.git(this.work, 'rev-parse', 'HEAD').trim();
  }

  private git(cwd: string, ...args: string[]): string {
    return execFileSync('git', args, {
      cwd,
      encoding: 'utf8',
      env: { PATH: process.env.PATH, HOME: tmpdir() },
    });
  }
}

describe('repository-backed factories (local bare repo, polling the production branch)', () => {
  let env: TestEnvironment;
  let app: TestApp;
  let api: ReturnType<typeof apiClient>;
  let repo: LocalRepo;
  let factory: string;

  beforeAll(async () => {
    env = createTestEnvironment('factories_repo', 'http://127.0.0.1:9/v1');
    app = await startTestApp(env, ['api', 'ingress', 'worker'], {
      'factories.repositoryProtocols': 'file,http',
      // The private repository below is served on loopback, which the egress policy refuses
      // unless the operator allow-lists it (test/security/egress.e2e-spec.ts: the default).
      'egress.allow': '127.0.0.1',
      'factories.pollIntervalMs': 200,
    });
    api = apiClient(app.baseUrl, app.apiKey);
    await api.post('/secrets', { name: 'REPO_HOOK_SECRET', value: 'repo-hook-token-0123456789' });
    repo = new LocalRepo();
  });

  afterAll(async () => {
    await app?.close();
    await env?.destroy();
    if (repo) rmSync(dirname(repo.bare), { recursive: true, force: true });
  });

  const webhookNames = async () =>
    ((await api.get(`/factory/${factory}/webhooks`)).body.webhooks as { name: string }[]).map(
      (w) => w.name,
    );

  it('creates the factory from the branch head and applies its webhooks', async () => {
    const head = repo.commit({
      'factory.yaml': 'schemaVersion: v1alpha1\nname: From Git\ndescription: lives in a repo\n',
      'webhooks/ci.yaml': 'secretName: REPO_HOOK_SECRET\n',
      'README.md': 'not part of the definition',
    });
    const created = await api.post('/factory', { repository: { url: repo.bare } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: 'From Git',
      description: 'lives in a repo',
      definition_source: {
        kind: 'repository',
        repository_url: repo.bare,
        branch: 'main',
        applied_commit: head,
      },
    });
    factory = created.body.uid;
    expect(await webhookNames()).toEqual(['ci']);
    const [hook] = (await api.get(`/factory/${factory}/webhooks`)).body.webhooks;
    const res = await deliver(`${app.ingressUrl}/webhooks/w/${hook.uid}`, '{"from":"git"}', {
      Authorization: 'Bearer repo-hook-token-0123456789',
    });
    expect(res.status).toBe(202);
    const files = (await api.get(`/factory/${factory}/definition`)).body.files.map(
      (f: { path: string }) => f.path,
    );
    expect(files).toEqual(['factory.yaml', 'webhooks/ci.yaml']);
  });

  it('applies each new commit of the production branch', async () => {
    const head = repo.commit({
      'webhooks/deploys.yaml': 'secretName: REPO_HOOK_SECRET\nenabled: false\n',
    });
    await waitFor(
      async () => (await api.get(`/factory/${factory}`)).body.definition_source.applied_commit,
      (c) => c === head,
      { what: 'the new commit to apply' },
    );
    expect(await webhookNames()).toEqual(['ci', 'deploys']);
  });

  it('keeps the last good definition when a commit is invalid, and says why', async () => {
    const before = (await api.get(`/factory/${factory}`)).body.definition_source.applied_commit;
    const bad = repo.commit({
      'webhooks/broken.yaml': 'secretName: NO_SUCH_SECRET\n',
      'webhooks/ci.yaml': null,
    });
    const source = await waitFor(
      async () => (await api.get(`/factory/${factory}`)).body.definition_source,
      (s) => s.last_sync?.commit === bad && s.last_sync.status === 'failed',
      { what: 'the bad commit to be refused' },
    );
    expect(source.applied_commit).toBe(before);
    expect(source.last_sync.diagnostics).toEqual([
      expect.objectContaining({
        path: 'webhooks/broken.yaml',
        line: 1,
        message: expect.stringContaining('NO_SUCH_SECRET'),
      }),
    ]);
    expect(await webhookNames()).toEqual(['ci', 'deploys']);
    // A fixed commit applies; a file removed from the repository deletes its webhook.
    const fixed = repo.commit({ 'webhooks/broken.yaml': null });
    await waitFor(
      async () => (await api.get(`/factory/${factory}`)).body.definition_source.applied_commit,
      (c) => c === fixed,
      { what: 'the fix to apply' },
    );
    expect(await webhookNames()).toEqual(['deploys']);
  });

  it('refuses webhook changes through the API on a repository-backed factory, and syncs on demand', async () => {
    const res = await api.post(`/factory/${factory}/webhooks`, { name: 'api-made' });
    expect(res.status).toBe(422);
    expect(res.body.detail).toContain(repo.bare);
    expect((await api.put(`/factory/${factory}/definition`, { files: [] })).status).toBe(422);
    // The poller may be syncing this factory at this moment: 409 with Retry-After, as documented.
    const synced = await waitFor(
      () => api.post(`/factory/${factory}/sync`),
      (res) => res.status !== 409,
      { what: 'a sync not racing the poller' },
    );
    expect(synced.status).toBe(200);
    expect(synced.body.definition_source.last_sync.status).toBe('applied');
  });

  it('takes a new value of the team secret at the next forced sync (the toggle of a repository-backed webhook)', async () => {
    const head = repo.commit({ 'webhooks/live.yaml': 'secretName: REPO_HOOK_SECRET\n' });
    await waitFor(
      async () => (await api.get(`/factory/${factory}`)).body.definition_source.applied_commit,
      (c) => c === head,
      { what: 'the live webhook to apply' },
    );
    const hook = (await api.get(`/factory/${factory}/webhooks`)).body.webhooks.find(
      (w: { name: string }) => w.name === 'live',
    );
    const post = (token: string) =>
      deliver(`${app.ingressUrl}/webhooks/w/${hook.uid}`, `{"t":"${token}"}`, {
        Authorization: `Bearer ${token}`,
      });
    const renewed = 'repo-hook-token-renewed-987654';
    expect((await api.put('/secrets/REPO_HOOK_SECRET', { value: renewed })).status).toBe(200);
    expect((await post('repo-hook-token-0123456789')).status).toBe(202);
    // The poller may hold the sync lock for a moment (409): ask again until the forced sync runs.
    await waitFor(
      async () => (await api.post(`/factory/${factory}/sync`)).status,
      (status) => status === 200,
      { what: 'a forced sync' },
    );
    expect((await post(renewed)).status).toBe(202);
    expect((await post('repo-hook-token-0123456789')).status).toBe(401);
  });

  it('reads a private https repository with the token from the team secret it names', async () => {
    const token = 'github_pat_factory_reader_0123';
    const gitRoot = mkdtempSync(join(tmpdir(), 'ambient-private-factory-'));
    bareRepo(gitRoot, 'acme', 'factory', {
      'factory.yaml': 'schemaVersion: v1alpha1\nname: Private\n',
      'webhooks/alerts.yaml': 'secretName: REPO_HOOK_SECRET\n',
    });
    const git = await startGitHttpServer(gitRoot, token);
    const url = `${git.url}/acme/factory.git`;
    try {
      const anonymous = await api.post('/factory', { repository: { url } });
      expect(anonymous.status).toBe(400);
      expect(anonymous.body.detail).toMatch(/^repository\.url: /);
      const unknown = await api.post('/factory', {
        repository: { url, credentials_secret: 'NO_SUCH_TOKEN' },
      });
      expect(unknown.status).toBe(400);
      expect(unknown.body.detail).toMatch(/^repository\.credentials_secret: no team secret/);
      const local = await api.post('/factory', {
        repository: { url: repo.bare, credentials_secret: 'REPO_HOOK_SECRET' },
      });
      expect(local.body.detail).toMatch(/^repository\.credentials_secret: .*http\(s\)/);

      await api.post('/secrets', { name: 'FACTORY_REPO_TOKEN', value: token });
      const created = await api.post('/factory', {
        repository: { url, credentials_secret: 'FACTORY_REPO_TOKEN' },
      });
      expect(created.status).toBe(201);
      expect(created.body.definition_source).toMatchObject({
        repository_url: url,
        credentials_secret: 'FACTORY_REPO_TOKEN',
      });
      expect(JSON.stringify(created.body)).not.toContain(token);
      const uid = created.body.uid as string;
      const names = async () =>
        (await api.get(`/factory/${uid}/webhooks`)).body.webhooks.map(
          (w: { name: string }) => w.name,
        );
      expect(await names()).toEqual(['alerts']);

      // The poller fetches with the token too; the secret cannot be deleted while it is used.
      pushFiles(gitRoot, 'acme', 'factory', {
        'webhooks/deploys.yaml': 'secretName: REPO_HOOK_SECRET\n',
      });
      await waitFor(names, (list) => list.includes('deploys'), {
        what: 'the private commit to apply',
      });
      const deleting = await api.delete('/secrets/FACTORY_REPO_TOKEN');
      expect(deleting.status).toBe(409);
      expect(deleting.body.detail).toContain('Private');

      // Without credentials the next sync fails and says so; the applied definition stays.
      const cleared = await api.patch(`/factory/${uid}`, { repository_credentials_secret: null });
      expect(cleared.status).toBe(200);
      expect(cleared.body.definition_source.credentials_secret).toBeNull();
      // The poller (every 200 ms here) and a forced sync share one lock: whichever runs, the
      // recorded outcome of a fetch without credentials is a failure, and nothing is unapplied.
      await api.post(`/factory/${uid}/sync`);
      const source = await waitFor(
        async () => (await api.get(`/factory/${uid}`)).body.definition_source,
        (s) => s.last_sync?.status === 'failed',
        { what: 'a sync without credentials to fail' },
      );
      expect(source.last_sync.message).toBeTruthy();
      expect(await names()).toEqual(['alerts', 'deploys']);
      expect((await api.delete('/secrets/FACTORY_REPO_TOKEN')).status).toBe(204);

      const managed = await api.post('/factory', { name: 'managed one' });
      const refused = await api.patch(`/factory/${managed.body.uid}`, {
        repository_credentials_secret: 'REPO_HOOK_SECRET',
      });
      expect(refused.status).toBe(400);
      expect(refused.body.detail).toMatch(/^repository_credentials_secret: /);
    } finally {
      await git.close();
      rmSync(gitRoot, { recursive: true, force: true });
    }
  });

  it('refuses a repository given as a list or a string, naming the field, and creates nothing', async () => {
    const factoryIds = async () =>
      ((await api.get('/factory')).body.factories as { uid: string }[]).map((f) => f.uid);
    const before = await factoryIds();
    for (const repository of [[], [{ url: repo.bare }], 'file:///tmp']) {
      const res = await api.post('/factory', { description: 'x', repository });
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(/^repository: must be an object/);
    }
    expect(await factoryIds()).toEqual(before);
  });

  it('refuses a repository URL whose transport the operator has not allowed', async () => {
    const strict = await startTestApp(env, ['api']);
    try {
      const res = await apiClient(strict.baseUrl, strict.apiKey).post('/factory', {
        repository: { url: repo.bare },
      });
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(/^repository\.url: must be a git URL using https, ssh/);
      const ext = await apiClient(strict.baseUrl, strict.apiKey).post('/factory', {
        repository: { url: 'ext::sh -c touch% /tmp/pwned' },
      });
      expect(ext.body.detail).toMatch(/^repository\.url/);
    } finally {
      await strict.close();
    }
  });
});
