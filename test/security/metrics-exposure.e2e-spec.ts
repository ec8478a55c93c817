import { loadConfig } from '../../src/config/app-config';
import { FakeModelServer, startFakeModelServer } from '../fixtures/fake-model-server';
import { scrape } from '../support/prometheus';
import { createTestEnvironment, startTestApp, TestApp, TestEnvironment } from '../support/test-app';

const TOKEN = 'metrics-token-0123456789abcdef';

/**
 * Issue 19, class 8: `/metrics` (runs by state, cost per model, routes of every team) was public
 * on the API port. It is now on its own listener, loopback by default; the API port serves it
 * only when a token is configured, and then only to a scraper that sends it.
 */
describe('security: /metrics is not on the public API port', () => {
  let model: FakeModelServer;
  let env: TestEnvironment;
  const apps: TestApp[] = [];

  beforeAll(async () => {
    model = await startFakeModelServer();
    env = createTestEnvironment('sec-metrics', model.url);
  });

  afterAll(async () => {
    for (const app of apps) await app.close();
    await env?.destroy();
    await model?.close();
  });

  const start = async (overrides: Record<string, unknown> = {}) => {
    const app = await startTestApp(env, ['api'], overrides);
    apps.push(app);
    return app;
  };
  const onApiPort = (app: TestApp) => app.baseUrl.replace(/\/api\/v1$/, '/metrics');

  it('defaults to a listener of its own on loopback (port 9464), never the API port', () => {
    const defaults = loadConfig({
      AMBIENT_CONFIG_FILE: 'config/default.yaml',
      AMBIENT_METRICS_PORT: '',
      AMBIENT_METRICS_HOST: '',
    }).metrics;
    expect(defaults).toEqual({ port: 9464, host: '127.0.0.1' });
    const off = loadConfig({ AMBIENT_METRICS_PORT: 'off' }).metrics;
    expect(off.port).toBeNull();
    expect(() => loadConfig({ AMBIENT_METRICS_TOKEN: 'short' })).toThrow(/AMBIENT_METRICS_TOKEN/);
    expect(() => loadConfig({ AMBIENT_METRICS_PORT: 'none' })).toThrow(
      'AMBIENT_METRICS_PORT: must be a number or off',
    );
  });

  it('answers 404 on the API port by default, and serves the metrics port without a key', async () => {
    const app = await start();
    const onApi = await fetch(onApiPort(app));
    expect(onApi.status).toBe(404);
    expect(await onApi.text()).not.toContain('ambient_');

    const own = app.ambient.metricsUrl!;
    expect(new URL(own).hostname).toBe('127.0.0.1');
    expect(new URL(own).port).not.toBe(new URL(app.baseUrl).port);
    expect((await scrape(own)).declares('ambient_runs')).toBe(true);
  });

  it('with AMBIENT_METRICS_PORT=off serves no metrics anywhere', async () => {
    const app = await start({ 'metrics.port': 'off' });
    expect(app.ambient.metricsUrl).toBeNull();
    expect((await fetch(onApiPort(app))).status).toBe(404);
  });

  it('with AMBIENT_METRICS_TOKEN: served on the API port and its own, only with the token', async () => {
    const app = await start({ 'metrics.token': TOKEN });
    const own = app.ambient.metricsUrl!;
    for (const url of [onApiPort(app), own]) {
      const anonymous = await fetch(url);
      expect({ url, status: anonymous.status }).toEqual({ url, status: 401 });
      expect(anonymous.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
      const problem = (await anonymous.json()) as Record<string, unknown>;
      expect(problem).toMatchObject({ status: 401, title: 'Authentication required' });
      expect(JSON.stringify(problem)).not.toContain('ambient_runs');

      const wrong = await fetch(url, { headers: { Authorization: `Bearer ${TOKEN}x` } });
      expect({ url, status: wrong.status }).toEqual({ url, status: 401 });
      // An API key is not the metrics token.
      const apiKey = await fetch(url, { headers: { Authorization: `Bearer ${app.apiKey}` } });
      expect({ url, status: apiKey.status }).toEqual({ url, status: 401 });

      const scraped = await fetch(url, { headers: { Authorization: `Bearer ${TOKEN}` } });
      expect({ url, status: scraped.status }).toEqual({ url, status: 200 });
      expect(await scraped.text()).toContain('# TYPE ambient_runs ');
    }
  });
});
