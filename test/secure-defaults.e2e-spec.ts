import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { FakeModelServer, startFakeModelServer } from './fixtures/fake-model-server';
import { apiClient } from './support/api-client';
import { runCli } from './support/cli-process';
import { createTestEnvironment, TEST_API_KEY, TestEnvironment } from './support/test-app';
import { createFactory, createWebhook, deliver } from './support/webhook-helpers';
import { spawnAmbient, startedUrls, waitForExit } from './support/worker-process';

/** `npm ci && npm start` with no keys configured: key files under var/, refused in production. */
describe('secure defaults (generated key files)', () => {
  let model: FakeModelServer;
  let env: TestEnvironment;
  let keyDir: string;

  beforeAll(async () => {
    model = await startFakeModelServer();
    model.script('secure-defaults', [{ text: 'ok' }]);
    env = createTestEnvironment('secure_defaults', model.url);
    keyDir = join(mkdtempSync(join(tmpdir(), 'ambient-keys-')), 'keys');
  });

  afterAll(async () => {
    if (keyDir) rmSync(dirname(keyDir), { recursive: true, force: true });
    await env?.destroy();
    await model?.close();
  });

  /** The test environment as a newcomer has it: no AMBIENT_SECRETS_KEY, no AMBIENT_URL_SIGNING_KEY. */
  const keylessEnv = (extra: Record<string, string> = {}) => {
    const childEnv = env.childEnv({
      AMBIENT_ROLES: 'api,ingress',
      AMBIENT_PORT: '0',
      AMBIENT_HOST: '127.0.0.1',
      AMBIENT_INGRESS_HOST: '127.0.0.1',
      AMBIENT_BOOTSTRAP_API_KEY: TEST_API_KEY,
      AMBIENT_KEY_DIR: keyDir,
    });
    delete childEnv.AMBIENT_SECRETS_KEY;
    delete childEnv.AMBIENT_URL_SIGNING_KEY;
    return { ...childEnv, ...extra };
  };

  const start = async (extra: Record<string, string> = {}) => {
    const ambient = spawnAmbient(keylessEnv(extra));
    await ambient.ready;
    const output = ambient.output();
    return {
      ...ambient,
      api: apiClient(startedUrls(output).apiUrl!, TEST_API_KEY),
      ingressUrl: startedUrls(output).ingressUrl!,
      stop: async () => {
        ambient.child.kill('SIGTERM');
        expect(await waitForExit(ambient.child)).toBe(0);
      },
    };
  };

  let hook: { uid: string; secret: string | null };
  let downloadUrl: string;
  const secretsFile = () => join(keyDir, 'secrets.key');
  const signingFile = () => join(keyDir, 'url-signing.key');

  it('creates the key files on a first start, says where once, and webhooks and secrets work', async () => {
    const first = await start();
    const lines = first.output().split('\n');
    const told = lines.filter((line) => line.includes('generated AMBIENT_SECRETS_KEY'));
    expect(told).toHaveLength(1);
    expect(told[0]).toContain(`AMBIENT_SECRETS_KEY → ${secretsFile()}`);
    expect(told[0]).toContain(`AMBIENT_URL_SIGNING_KEY → ${signingFile()}`);
    expect(told[0]).toMatch(/Replicas on other machines need the same values/);
    expect(first.output()).not.toMatch(/webhooks cannot be verified/);
    expect(statSync(secretsFile()).mode & 0o777).toBe(0o600);
    expect(statSync(signingFile()).mode & 0o777).toBe(0o600);

    const secret = await first.api.post('/secrets', { name: 'DEPLOY_TOKEN', value: 's3cr3t' });
    expect(secret.status).toBe(201);
    const factory = await createFactory(first.api);
    hook = await createWebhook(first.api, factory, { name: 'deploys' });
    const delivered = await deliver(`${first.ingressUrl}/webhooks/w/${hook.uid}`, '{"a":1}', {
      Authorization: `Bearer ${hook.secret}`,
    });
    expect(delivered.status).toBe(202);

    const run = await first.api.post('/agent/runs', {
      prompt: 'with a file [script:secure-defaults]',
      attachments: [
        {
          file_name: 'notes.txt',
          mime_type: 'text/plain',
          data: Buffer.from('hello').toString('base64'),
        },
      ],
    });
    expect(run.status).toBe(200);
    const listed = await first.api.get(`/agent/runs/${run.body.run_id}/handoff/attachments`);
    downloadUrl = listed.body.attachments[0].download_url;
    expect((await first.api.download(downloadUrl)).body).toBe('hello');
    await first.stop();
  });

  it('reuses the files on the next start: stored secrets decrypt and signed URLs stay valid', async () => {
    const before = [readFileSync(secretsFile(), 'utf8'), readFileSync(signingFile(), 'utf8')];
    const second = await start();
    expect(second.output()).not.toMatch(/generated AMBIENT_/);
    expect([readFileSync(secretsFile(), 'utf8'), readFileSync(signingFile(), 'utf8')]).toEqual(
      before,
    );
    // The webhook's secret snapshot was encrypted by the first process.
    const delivered = await deliver(`${second.ingressUrl}/webhooks/w/${hook.uid}`, '{"a":2}', {
      Authorization: `Bearer ${hook.secret}`,
    });
    expect(delivered.status).toBe(202);
    expect((await second.api.download(downloadUrl)).body).toBe('hello');
    await second.stop();
  });

  it('gives the CLI the same key file and never creates one for migrate', async () => {
    const reencrypt = await runCli(['secrets', 'reencrypt'], keylessEnv());
    expect(reencrypt.stderr).toBe('');
    expect(reencrypt.code).toBe(0);

    const emptyDir = join(dirname(keyDir), 'empty-keys');
    const migrate = await runCli(['migrate'], keylessEnv({ AMBIENT_KEY_DIR: emptyDir }));
    expect(migrate.code).toBe(0);
    expect(existsSync(emptyDir)).toBe(false);
    const keyless = await runCli(
      ['secrets', 'reencrypt'],
      keylessEnv({ AMBIENT_KEY_DIR: emptyDir }),
    );
    expect(keyless.code).toBe(1);
    expect(keyless.stderr.trim()).toBe(
      `ambient: AMBIENT_SECRETS_KEY: missing (not set, and no key file in ${emptyDir})`,
    );
  });

  it.each([
    [{}, 'AMBIENT_SECRETS_KEY, AMBIENT_URL_SIGNING_KEY'],
    [{ AMBIENT_SECRETS_KEY: '7e'.repeat(32) }, 'AMBIENT_URL_SIGNING_KEY'],
  ])(
    'exits 1 with one line in NODE_ENV=production without explicit keys (%o)',
    async (extra, named) => {
      const ambient = spawnAmbient(keylessEnv({ NODE_ENV: 'production', ...extra }));
      ambient.ready.catch(() => undefined);
      expect(await waitForExit(ambient.child)).toBe(1);
      const output = (await ambient.finalOutput()).trim();
      expect(output.split('\n')).toHaveLength(1);
      expect(output).toMatch(
        new RegExp(`^ambient: ${named}: required when NODE_ENV=production \\(key files`),
      );
    },
  );
});
