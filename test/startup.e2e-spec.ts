import { FakeModelServer, startFakeModelServer } from './fixtures/fake-model-server';
import { apiClient } from './support/api-client';
import { createTestEnvironment, TestEnvironment } from './support/test-app';
import { spawnAmbient, startedUrls, waitForExit } from './support/worker-process';

/** `npm start` as a user meets it: one clear line for a bad setting, a first key printed once. */
describe('start-up', () => {
  let model: FakeModelServer;
  let env: TestEnvironment;

  beforeAll(async () => {
    model = await startFakeModelServer();
    env = createTestEnvironment('startup', model.url);
  });

  afterAll(async () => {
    await env?.destroy();
    await model?.close();
  });

  const failedStart = async (extra: Record<string, string>) => {
    const ambient = spawnAmbient(
      env.childEnv({ AMBIENT_ROLES: 'api', AMBIENT_PORT: '0', ...extra }),
    );
    ambient.ready.catch(() => undefined);
    const code = await waitForExit(ambient.child);
    return { code, output: ambient.output().trim() };
  };

  it.each([
    [{ AMBIENT_PORT: 'eighty' }, /^ambient: AMBIENT_PORT: must be a number/],
    [{ AMBIENT_ROLES: 'api,chef' }, /^ambient: AMBIENT_ROLES: unknown role "chef"/],
    [
      { REDIS_URL: 'redis://127.0.0.1:1' },
      /^ambient: REDIS_URL: cannot reach Redis at 127\.0\.0\.1:1/,
    ],
    [
      { DATABASE_URL: 'mysql://root@127.0.0.1:1/ambient_x' },
      /^ambient: DATABASE_URL: cannot connect to MySQL at 127\.0\.0\.1:1/,
    ],
  ])('stops with one line naming the bad setting (%o)', async (extra, line) => {
    const { code, output } = await failedStart(extra);
    expect(code).toBe(1);
    expect(output).toMatch(line);
    expect(output.split('\n')).toHaveLength(1);
  });

  it('prints a first API key once on an empty database, and it works', async () => {
    const first = spawnAmbient(
      env.childEnv({ AMBIENT_ROLES: 'api', AMBIENT_PORT: '0', AMBIENT_HOST: '127.0.0.1' }),
    );
    await first.ready;
    const key = /(amb_[A-Za-z0-9]{12}_[A-Za-z0-9]{32})/.exec(first.output())?.[1];
    expect(key).toBeDefined();
    first.child.kill('SIGTERM');
    expect(await waitForExit(first.child)).toBe(0);

    const second = spawnAmbient(
      env.childEnv({ AMBIENT_ROLES: 'api', AMBIENT_PORT: '0', AMBIENT_HOST: '127.0.0.1' }),
    );
    await second.ready;
    const apiUrl = startedUrls(second.output()).apiUrl!;
    expect(second.output()).not.toMatch(/amb_[A-Za-z0-9]{12}_/);
    const models = await apiClient(apiUrl, key!).get('/agent/models');
    expect(models.status).toBe(200);
    second.child.kill('SIGTERM');
    expect(await waitForExit(second.child)).toBe(0);
  });
});
