import { FakeModelServer, startFakeModelServer } from './fixtures/fake-model-server';
import { apiClient } from './support/api-client';
import { jsonLines } from './support/log-lines';
import { createTestEnvironment, TestEnvironment } from './support/test-app';
import { spawnAmbient, waitForExit } from './support/worker-process';
import { waitFor } from './support/wait';

const KEY = 'amb_logging_test_key_0123456789';

/** `npm start` as an operator's log collector sees it: JSON lines, request ids, one summary. */
describe('logs (a real Ambient process)', () => {
  let model: FakeModelServer;
  let env: TestEnvironment;
  let ambient: ReturnType<typeof spawnAmbient>;
  let apiUrl: string;
  let ingressUrl: string;

  beforeAll(async () => {
    model = await startFakeModelServer();
    env = createTestEnvironment('logging', model.url);
    ambient = spawnAmbient(
      env.childEnv({
        AMBIENT_ROLES: 'api,ingress,worker',
        AMBIENT_PORT: '0',
        AMBIENT_HOST: '127.0.0.1',
        AMBIENT_LOG_FORMAT: 'json',
        AMBIENT_BOOTSTRAP_API_KEY: KEY,
      }),
    );
    await ambient.ready;
    const summary = jsonLines(ambient.output()).find((l) => l.context === 'Ambient');
    ({ api: apiUrl, ingress: ingressUrl } = summary?.startup as { api: string; ingress: string });
  });

  afterAll(async () => {
    if (ambient) {
      ambient.child.kill('SIGTERM');
      await waitForExit(ambient.child);
    }
    await env?.destroy();
    await model?.close();
  });

  it('starts with one summary line instead of module noise, and no data-source warning', () => {
    const output = ambient.output();
    const lines = jsonLines(output);
    // Every line is JSON (no first-key banner: a bootstrap key is configured).
    expect(output.trim().split('\n').length).toBe(lines.length);
    expect(output).not.toMatch(/InstanceLoader|RoutesResolver|RouterExplorer|Mapped \{/);
    expect(output).not.toContain('already registered');
    const summary = lines.find((l) => l.context === 'Ambient')!;
    expect(summary).toMatchObject({
      level: 'info',
      startup: {
        roles: ['api', 'ingress', 'worker'],
        api: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/api\/v1$/),
        ingress: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
        metrics: expect.stringMatching(/\/metrics$/),
        database: expect.stringMatching(/^127\.0\.0\.1:3306\/amb_t_logging_/),
        sandbox: 'bubblewrap',
        keys: {
          AMBIENT_SECRETS_KEY: 'set',
          AMBIENT_URL_SIGNING_KEY: 'set',
          AMBIENT_BOOTSTRAP_API_KEY: 'set',
        },
      },
    });
    expect(JSON.stringify(summary)).not.toContain('amb_logging_test_key');
    expect(lines.length).toBeLessThan(15);
  });

  it.each([
    ['an unknown route (404)', '/no-such-thing', 404],
    ['a route without a key (401)', '/agent/runs', 401],
  ])(
    "puts the caller's X-Request-Id in the answer, its trace_id and its log line: %s",
    async (_what, path, status) => {
      const id = `req-${status}-${Date.now()}`;
      const res = await fetch(`${apiUrl}${path}?token=secret-in-query`, {
        headers: { 'X-Request-Id': id },
      });
      expect(res.status).toBe(status);
      expect(res.headers.get('x-request-id')).toBe(id);
      const body = (await res.json()) as { trace_id?: string };
      expect(body.trace_id).toBe(id);
      const line = await waitFor(
        async () => jsonLines(ambient.output()).find((l) => l.request_id === id),
        (found) => found !== undefined,
        { what: `the log line of ${id}` },
      );
      expect(line).toMatchObject({
        level: 'info',
        msg: 'request completed',
        request_id: id,
        method: 'GET',
        path: `/api/v1${path}`,
        status_code: status,
      });
      expect(typeof line!.duration_ms).toBe('number');
      expect(JSON.stringify(line)).not.toContain('secret-in-query');
    },
  );

  it('gives a request without a usable id a new one, in the header, the body and the log', async () => {
    const res = await fetch(`${apiUrl}/no-such-thing`, {
      headers: { 'X-Request-Id': 'bad id with spaces' },
    });
    const id = res.headers.get('x-request-id')!;
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(((await res.json()) as { trace_id: string }).trace_id).toBe(id);
    await waitFor(
      async () => jsonLines(ambient.output()).some((l) => l.request_id === id),
      (found) => found,
      { what: `the log line of ${id}` },
    );
  });

  /** Every log line of a request, once its `request completed` line is out. */
  const requestLines = async (id: string) => {
    await waitFor(
      async () => jsonLines(ambient.output()).some((l) => l.request_id === id && l.path),
      (found) => found,
      { what: `the log line of ${id}` },
    );
    return jsonLines(ambient.output()).filter((l) => l.request_id === id);
  };

  describe('masks every credential a path carries', () => {
    const SHARE_TOKEN = 'Sh4reT0kenNeverLogged';
    const URL_TOKEN = 'UrlT0kenNeverLogged';
    const KEY_IN_PATH = 'amb_abcdefghijkl_NeverLogged0123456789abcdefghi';
    let viewerKey: string;
    beforeAll(async () => {
      const created = await apiClient(apiUrl, KEY).post('/api-keys', {
        name: 'viewer',
        role: 'viewer',
      });
      viewerKey = created.body.key as string;
    });

    it.each([
      [
        'a share token refused to a viewer: request log, Access warning, audit path',
        () => `${apiUrl}/agent/environments/shared/${SHARE_TOKEN}/accept`,
        'POST',
        () => viewerKey,
        403,
        '/api/v1/agent/environments/shared/[token]/accept',
      ],
      [
        'a share token',
        () => `${apiUrl}/agent/environments/shared/${SHARE_TOKEN}/accept`,
        'POST',
        () => KEY,
        404,
        '/api/v1/agent/environments/shared/[token]/accept',
      ],
      [
        "a webhook's url token",
        () => `${ingressUrl}/webhooks/w/wh_unknown/${URL_TOKEN}`,
        'POST',
        () => undefined,
        404,
        '/webhooks/w/wh_unknown/[token]',
      ],
      [
        'an API key',
        () => `${apiUrl}/agent/runs/${KEY_IN_PATH}`,
        'GET',
        () => KEY,
        404,
        '/api/v1/agent/runs/[key]',
      ],
    ])('%s', async (_what, url, method, key, status, masked) => {
      const id = `masked-${Date.now()}-${Math.random().toString(36).slice(2)}`;
      const apiKey = key();
      const res = await fetch(url(), {
        method,
        headers: {
          'X-Request-Id': id,
          ...(apiKey ? { Authorization: `Bearer ${apiKey}` } : {}),
          ...(method === 'POST' ? { 'Content-Type': 'application/json' } : {}),
        },
        ...(method === 'POST' ? { body: '{}' } : {}),
      });
      expect(res.status).toBe(status);
      const lines = await requestLines(id);
      expect(lines.find((l) => l.msg === 'request completed')).toMatchObject({ path: masked });
      for (const secret of [SHARE_TOKEN, URL_TOKEN, KEY_IN_PATH]) {
        expect(JSON.stringify(lines)).not.toContain(secret);
      }
      if (status !== 403) return;
      const warning = lines.find((l) => l.context === 'Access');
      expect(warning?.msg).toContain(`denied POST ${masked}:`);
      const events = (await apiClient(apiUrl, KEY).get('/audit-events')).body.events as {
        request_id: string | null;
        details: Record<string, unknown>;
      }[];
      const denied = events.find((e) => e.request_id === id);
      expect(denied?.details).toMatchObject({ method: 'POST', path: masked });
      expect(JSON.stringify(events)).not.toContain(SHARE_TOKEN);
    });
  });

  /** The `run started` and `run ended` lines of a run, once it has ended. */
  const runLines = async (runId: string) => {
    const ended = await waitFor(
      async () =>
        jsonLines(ambient.output()).find((l) => l.run_id === runId && l.msg === 'run ended'),
      (found) => found !== undefined,
      { what: `the end line of run ${runId}` },
    );
    const started = jsonLines(ambient.output()).find(
      (l) => l.run_id === runId && l.msg === 'run started',
    );
    return { started, ended: ended! };
  };

  it('logs the start and the end of a run that succeeds: state, duration, cost', async () => {
    model.script('logged-ok', [{ text: 'All done.' }]);
    const created = await apiClient(apiUrl, KEY).post('/agent/runs', {
      prompt: 'Say done [script:logged-ok]',
    });
    expect(created.status).toBe(200);
    const runId = created.body.run_id as string;
    const { started, ended } = await runLines(runId);
    expect(started).toMatchObject({
      level: 'info',
      context: 'Runs',
      run_id: runId,
      team_id: expect.any(String),
      model: expect.any(String),
      execution_id: 1,
    });
    expect(ended).toMatchObject({
      level: 'info',
      context: 'Runs',
      run_id: runId,
      team_id: started!.team_id,
      state: 'SUCCEEDED',
      duration_ms: expect.any(Number),
      cost_usd: expect.any(Number),
    });
    expect(ended.duration_ms as number).toBeGreaterThanOrEqual(0);
    expect(ended).not.toHaveProperty('error_code');
  });

  it('logs the error code and message of a run that fails', async () => {
    model.script('logged-refused', [{ status: 401, error: 'invalid api key' }]);
    const created = await apiClient(apiUrl, KEY).post('/agent/runs', {
      prompt: 'Try [script:logged-refused]',
    });
    const runId = created.body.run_id as string;
    const { started, ended } = await runLines(runId);
    expect(started).toMatchObject({ level: 'info', run_id: runId, execution_id: 1 });
    expect(ended).toMatchObject({
      level: 'info',
      run_id: runId,
      state: 'FAILED',
      error_code: 'external_authentication_required',
      status_message: expect.stringContaining('401'),
      duration_ms: expect.any(Number),
      cost_usd: expect.any(Number),
    });
  });

  it('prints a readable line on a terminal format (AMBIENT_LOG_FORMAT=pretty)', async () => {
    const pretty = spawnAmbient(
      env.childEnv({
        AMBIENT_ROLES: 'api',
        AMBIENT_PORT: '0',
        AMBIENT_HOST: '127.0.0.1',
        AMBIENT_LOG_FORMAT: 'pretty',
        AMBIENT_BOOTSTRAP_API_KEY: KEY,
      }),
    );
    try {
      await pretty.ready;
      const output = pretty.output();
      expect(output).toMatch(
        /INFO: \[Ambient\] roles api; API on http:\/\/127\.0\.0\.1:\d+\/api\/v1;/,
      );
      expect(jsonLines(output)).toEqual([]);
      expect(output).not.toMatch(/InstanceLoader|already registered/);
    } finally {
      pretty.child.kill('SIGTERM');
      expect(await waitForExit(pretty.child)).toBe(0);
    }
  });
});
