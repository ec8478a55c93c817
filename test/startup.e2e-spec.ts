import { FakeModelServer, startFakeModelServer } from './fixtures/fake-model-server';
import { apiClient } from './support/api-client';
import { createTestEnvironment, TestEnvironment } from './support/test-app';
import { jsonLines } from './support/log-lines';
import { waitFor } from './support/wait';
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
    return { code, output: (await ambient.finalOutput()).trim() };
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

  it('says how to build a missing sandbox image at start-up, and a run fails with that fix', async () => {
    const key = 'amb_startup_image_key_0123456789';
    const ambient = spawnAmbient(
      env.childEnv({
        AMBIENT_ROLES: 'api,worker',
        AMBIENT_PORT: '0',
        AMBIENT_HOST: '127.0.0.1',
        AMBIENT_SANDBOX: 'docker',
        AMBIENT_DOCKER_IMAGE: 'ambient-missing:none',
        AMBIENT_LOG_FORMAT: 'json',
        AMBIENT_BOOTSTRAP_API_KEY: key,
      }),
    );
    try {
      await ambient.ready;
      const fix =
        'image "ambient-missing:none" is missing: build it with sandbox/agent-image/build-image.sh --tag ambient-missing:none';
      const output = ambient.output();
      const lines = jsonLines(output);
      expect(lines).toContainEqual(
        expect.objectContaining({
          level: 'warn',
          context: 'Sandbox',
          msg: expect.stringContaining(fix),
        }),
      );
      const summary = lines.find((l) => l.context === 'Ambient')!;
      expect(summary.startup).toMatchObject({
        sandbox: 'docker',
        sandbox_warning: expect.stringContaining(fix),
      });
      expect(summary.msg).toContain(
        `sandbox docker (runs without an environment image will fail: ${fix}`,
      );

      const api = apiClient(startedUrls(output).apiUrl!, key);
      model.script('missing-image', [{ text: 'Never asked.' }]);
      const created = await api.post('/agent/runs', { prompt: 'Hi [script:missing-image]' });
      expect(created.status).toBe(200);
      const runId = created.body.run_id as string;
      await waitFor(
        () => api.runState(runId),
        (state) => state === 'FAILED',
        { what: `run ${runId} to fail` },
      );
      const run = (await api.get(`/agent/runs/${runId}`)).body;
      expect(run.status_message).toMatchObject({ error_code: 'environment_setup_failed' });
      expect(run.status_message.message).toContain(fix);
      expect(run.status_message.message).not.toMatch(/registry|lookup|no such host|cannot pull/);
      expect(model.requests.some((r) => r.script === 'missing-image')).toBe(false);
    } finally {
      ambient.child.kill('SIGTERM');
      expect(await waitForExit(ambient.child)).toBe(0);
    }
  });
});
