import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import type { AmbientExtension, Harness, SandboxBackend } from '@ambient/extension-api';
import { ProcessSandboxBackend } from '../src/extensions';
import { DEFAULT_TEAM } from '../src/modules/teams/bootstrap.service';
import { apiClient } from './support/api-client';
import { runCli } from './support/cli-process';
import { SelfHostedWorkers } from './support/self-hosted-worker-process';
import { createTestEnvironment, startTestApp, TestApp, TestEnvironment } from './support/test-app';
import { waitFor } from './support/wait';
import { createFactory, createWebhook, deliver } from './support/webhook-helpers';
import { spawnAmbient, waitForExit } from './support/worker-process';

const EXAMPLE = 'examples/extensions/hello-ambient';

/**
 * The example extension, loaded from outside src/ through AMBIENT_EXTENSIONS (the `extensions`
 * setting, resolved from the working directory): its harness and signature scheme work end to end.
 */
describe('extensions: examples/extensions/hello-ambient loaded by AMBIENT_EXTENSIONS', () => {
  let env: TestEnvironment;
  let app: TestApp;
  let api: ReturnType<typeof apiClient>;
  /** The example's declared setting HELLO_PROXY_SECRET, read when the process starts. */
  const proxySecret = 'hello-proxy-shared-secret-0123';

  beforeAll(async () => {
    // No model is ever called: the hello harness answers by itself.
    env = createTestEnvironment('extensions', 'http://127.0.0.1:9/v1');
    app = await startTestApp(
      env,
      ['api', 'worker', 'ingress'],
      { extensions: EXAMPLE },
      { env: { HELLO_PROXY_SECRET: proxySecret } },
    );
    api = apiClient(app.baseUrl, app.apiKey);
  });

  afterAll(async () => {
    await app?.close();
    await env?.destroy();
  });

  it('runs a run with harness hello through the normal lifecycle to SUCCEEDED', async () => {
    const prompt = 'Please greet the extension tester 7f3a';
    const created = await api.post('/agent/runs', {
      prompt,
      config: { harness: { type: 'hello' } },
    });
    expect(created.status).toBe(200);
    const runId = created.body.run_id as string;
    const run = await waitFor(
      async () => (await api.get(`/agent/runs/${runId}`)).body,
      (r) => ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(r.state),
      { what: `run ${runId} to finish`, timeoutMs: 60_000 },
    );
    expect(run.state).toBe('SUCCEEDED');
    expect(run.status_message?.message).toContain(prompt);

    const conversation = await api.get(`/agent/runs/${runId}/conversation`);
    expect(conversation.status).toBe(200);
    type Message = { role: string; content: { type: string; text?: string }[] };
    const messages = (conversation.body.steps[0].messages as Message[]).filter(
      (m) => m.role !== 'system',
    );
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    const answer = messages[1].content.map((c) => c.text ?? '').join('');
    expect(answer).toContain('Hello from hello-ambient');
    expect(answer).toContain(prompt);
  });

  it('refuses a harness type no extension registered, naming the field', async () => {
    const res = await api.post('/agent/runs', {
      prompt: 'x',
      config: { harness: { type: 'nonexistent' } },
    });
    expect(res.status).toBe(400);
    expect(res.body.detail ?? res.body.message ?? JSON.stringify(res.body)).toMatch(
      /config\.harness\.type.*oz.*hello/,
    );
  });

  it('accepts a delivery signed with hello-hmac and refuses a forged one with 401', async () => {
    const secret = 'hello-provider-secret-0123456789';
    const factory = await createFactory(api, 'Hello');
    const hook = await createWebhook(api, factory, {
      name: 'hello-hook',
      auth_mode: 'signature',
      signature_scheme: 'hello-hmac',
      provider_secret: secret,
    });
    const url = `${app.ingressUrl}/webhooks/w/${hook.uid}`;
    const body = '{"greeting":"hi"}';
    const sign = (key: string, payload: string) =>
      `sha256=${createHmac('sha256', key).update(payload).digest('hex')}`;
    const json = { 'content-type': 'application/json' };

    const good = await deliver(url, body, {
      ...json,
      'x-hello-signature': sign(secret, body),
      'x-hello-delivery': 'd-1',
    });
    expect(good.status).toBe(202);

    const forged = await deliver(url, body, {
      ...json,
      'x-hello-signature': sign('not-the-secret', body),
      'x-hello-delivery': 'd-2',
    });
    expect(forged.status).toBe(401);
    const tampered = await deliver(url, '{"greeting":"bye"}', {
      ...json,
      'x-hello-signature': sign(secret, body),
      'x-hello-delivery': 'd-3',
    });
    expect(tampered.status).toBe(401);
    const unsigned = await deliver(url, body, json);
    expect(unsigned.status).toBe(401);

    // An ingress that does not load the extension refuses even a correct signature (fail closed).
    const bare = await startTestApp(env, ['ingress']);
    try {
      const withoutScheme = await deliver(`${bare.ingressUrl}/webhooks/w/${hook.uid}`, body, {
        ...json,
        'x-hello-signature': sign(secret, body),
        'x-hello-delivery': 'd-4',
      });
      expect(withoutScheme.status).toBe(401);
    } finally {
      await bare.close();
    }
  });

  it('refuses a signature scheme no extension registered, naming the field', async () => {
    const factory = await createFactory(api, 'Unknown scheme');
    const res = await api.post(`/factory/${factory}/webhooks`, {
      name: 'nope',
      auth_mode: 'signature',
      signature_scheme: 'nonexistent',
      provider_secret: 'whatever-secret-0123456789',
    });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toMatch(/signature_scheme.*hello-hmac/);
  });

  it('recognises the people the hello-proxy strategy vouches for, with their role', async () => {
    const origin = new URL(app.baseUrl).origin;
    const asProxy = (headers: Record<string, string>) =>
      request(origin)
        .post('/api/v1/agent/runs')
        .set({ 'x-hello-proxy-secret': proxySecret, ...headers })
        .send({ prompt: 'proxied 9d2b', config: { harness: { type: 'hello' } } });
    const member = await asProxy({
      'x-hello-user': 'grace@example.com',
      'x-hello-role': 'member',
    });
    expect(member.status).toBe(200);
    const run = await api.get(`/agent/runs/${member.body.run_id}`);
    expect(run.body.creator).toMatchObject({ email: 'grace@example.com', type: 'user' });

    const viewer = await asProxy({ 'x-hello-user': 'linus@example.com' });
    expect(viewer.status).toBe(403);
    expect(viewer.body.detail).toMatch(/^role "viewer" lacks permission "runs.create"/);

    const forged = await asProxy({
      'x-hello-user': 'grace@example.com',
      'x-hello-proxy-secret': 'not-the-secret',
    });
    expect(forged.status).toBe(401);
  });

  it('lists the extension values in the served OpenAPI document beside the built-ins', async () => {
    const res = await request(new URL(app.baseUrl).origin).get('/api/v1/openapi.json');
    expect(res.status).toBe(200);
    const schemas = res.body.components.schemas;
    expect(schemas.Harness.properties.type.enum).toEqual([
      'oz',
      'claude',
      'gemini',
      'codex',
      'hello',
    ]);
    expect(schemas.CreateWebhookRequest.properties.signature_scheme.enum).toEqual(
      expect.arrayContaining(['standard_webhooks', 'github', 'hello-hmac']),
    );
    expect(schemas.Webhook.properties.signature_scheme.enum).toContain('hello-hmac');
    expect(JSON.stringify(res.body)).not.toContain('x-ambient-registry');
  });

  it('lists the extension scheme in the CLI (webhooks schemes)', async () => {
    const listed = await runCli(['webhooks', 'schemes'], {
      ...env.childEnv(),
      AMBIENT_API_URL: app.baseUrl,
      AMBIENT_API_KEY: app.apiKey,
    });
    expect(listed.code).toBe(0);
    expect(listed.stdout.trim().split('\n')).toEqual([
      'standard_webhooks',
      'stripe',
      'github',
      'sentry',
      'pagerduty',
      'vercel',
      'hello-hmac',
    ]);
  });
});

describe('extensions: a bad AMBIENT_EXTENSIONS entry', () => {
  let env: TestEnvironment;

  beforeAll(() => {
    env = createTestEnvironment('extensions_bad', 'http://127.0.0.1:9/v1');
  });

  afterAll(async () => {
    await env?.destroy();
  });

  it('fails start-up with one line naming the module', async () => {
    const missing = 'examples/extensions/does-not-exist';
    const ambient = spawnAmbient(
      env.childEnv({ AMBIENT_EXTENSIONS: `${EXAMPLE},${missing}`, AMBIENT_ROLES: 'api' }),
    );
    ambient.ready.catch(() => undefined);
    expect(await waitForExit(ambient.child)).toBe(1);
    const lines = (await ambient.finalOutput()).trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(`^ambient: AMBIENT_EXTENSIONS: cannot load "${missing}": `),
    );
  });
});

/**
 * A harness, a sandbox backend wrapping `process` and a header-based auth strategy, registered by
 * this test (outside src/).
 */
describe('extensions: a sandbox backend and an auth strategy registered through startAmbient(config, { extensions })', () => {
  let env: TestEnvironment;
  let app: TestApp;
  let api: ReturnType<typeof apiClient>;
  const opened: string[] = [];

  /** Runs one program in the execution's sandbox and answers with what it printed. */
  const sandboxEcho: Harness = {
    type: 'sandbox-echo',
    async run(context) {
      await context.recordMessage({ role: 'user', content: context.userMessages.join('\n') });
      const child = context.sandbox.spawn('sh', ['-c', 'echo "in $SANDBOX_MARK at $PWD"'], {
        env: { ...context.commandEnv, SANDBOX_MARK: context.userMessages[0] ?? '' },
      });
      let printed = '';
      child.stdout.on('data', (chunk: Buffer) => (printed += chunk.toString()));
      const exit = await child.exited;
      const answer = `${context.sandbox.backend}: ${printed.trim()} (exit ${exit.code})`;
      await context.recordMessage({ role: 'assistant', content: answer });
      return {
        outcome: exit.code === 0 ? 'succeeded' : 'failed',
        summary: answer,
        usage: { promptTokens: 0, completionTokens: 0, modelCalls: 0 },
      };
    },
  };

  /** What the traced extension's lifecycle saw, in order. */
  const lifecycle: string[] = [];
  let closed = false;

  const traced: AmbientExtension = {
    name: 'traced-sandbox',
    settings: [
      { name: 'TRACED_LABEL', type: 'string', default: 'traced', description: 'marks init' },
      { name: 'TRACED_DEPTH', type: 'number', default: 1, description: 'how deep' },
    ],
    init: ({ settings, config }) => {
      lifecycle.push(
        `init ${settings.TRACED_LABEL} ${settings.TRACED_DEPTH} ${config.sandbox.backend}`,
      );
    },
    destroy: () => {
      lifecycle.push('destroy');
    },
    harnesses: [sandboxEcho],
    sandboxBackends: [
      {
        name: 'traced-process',
        isolated: false,
        create: (): SandboxBackend => {
          const inner = new ProcessSandboxBackend();
          return {
            name: 'traced-process',
            open: async (spec) => {
              opened.push(spec.runId);
              return inner.open(spec);
            },
          };
        },
      },
    ],
  };

  /** `X-Test-User: <email>`: a member of the default team (a stand-in for an SSO proxy). */
  const headerAuth: AmbientExtension = {
    name: 'test-header-auth',
    authStrategies: ({ users }) => [
      {
        name: 'x-test-user',
        authenticate: async (req) => {
          const email = req.headers['x-test-user'];
          if (typeof email !== 'string') return null;
          return users.principalOf({ team: DEFAULT_TEAM, email, role: 'member' });
        },
      },
      {
        // `X-Test-Token: <id>`: a credential of the strategy's own (not an Ambient key) for Ada.
        name: 'x-test-token',
        authenticate: async (req) => {
          const token = req.headers['x-test-token'];
          if (typeof token !== 'string') return null;
          const ada = await users.principalOf({
            team: DEFAULT_TEAM,
            email: 'ada@example.com',
            role: 'member',
          });
          return ada && { ...ada, keyId: `test-token:${token}` };
        },
      },
    ],
  };

  beforeAll(async () => {
    env = createTestEnvironment('extensions_sandbox', 'http://127.0.0.1:9/v1');
    // With the ingress: two applications in one process share the extensions.
    app = await startTestApp(
      env,
      ['api', 'worker', 'ingress'],
      { 'sandbox.backend': 'traced-process' },
      { extensions: [traced, headerAuth], env: { TRACED_LABEL: 'mark-e2e', TRACED_DEPTH: '3' } },
    );
    api = apiClient(app.baseUrl, app.apiKey);
  });

  afterAll(async () => {
    if (!closed) await app?.close();
    await env?.destroy();
  });

  it('runs the execution in the extension backend chosen by AMBIENT_SANDBOX', async () => {
    expect(app.ambient.sandbox).toBe('traced-process');
    const health = await api.get('/health');
    expect(health.body.sandbox).toMatchObject({ backend: 'traced-process', isolated: false });
    const document = await request(new URL(app.baseUrl).origin).get('/api/v1/openapi.json');
    expect(document.body.components.schemas.SandboxInfo.properties.backend.enum).toEqual([
      'docker',
      'bubblewrap',
      'process',
      'traced-process',
      'unavailable',
    ]);

    const created = await api.post('/agent/runs', {
      prompt: 'mark-5c1e',
      config: { harness: { type: 'sandbox-echo' } },
    });
    expect(created.status).toBe(200);
    const runId = created.body.run_id as string;
    const run = await waitFor(
      async () => (await api.get(`/agent/runs/${runId}`)).body,
      (r) => ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(r.state),
      { what: `run ${runId} to finish`, timeoutMs: 60_000 },
    );
    expect(run.state).toBe('SUCCEEDED');
    expect(opened).toContain(runId);
    expect(run.status_message?.message).toMatch(/^process: in mark-5c1e at \/.+ \(exit 0\)$/);
  });

  it('authenticates by the header strategy: creates and lists runs as the person it names', async () => {
    const origin = new URL(app.baseUrl).origin;
    const asUser = (req: request.Test) => req.set('X-Test-User', 'ada@example.com');
    const created = await asUser(request(origin).post('/api/v1/agent/runs')).send({
      prompt: 'by-header-41c7',
      config: { harness: { type: 'sandbox-echo' } },
    });
    expect(created.status).toBe(200);
    const listed = await asUser(request(origin).get('/api/v1/agent/runs?limit=50'));
    expect(listed.status).toBe(200);
    const mine = (listed.body.runs as { run_id: string; creator?: { email?: string } }[]).find(
      (r) => r.run_id === created.body.run_id,
    );
    expect(mine?.creator).toMatchObject({ email: 'ada@example.com' });
    // The built-in key strategy is asked first and still works beside it.
    expect((await api.get(`/agent/runs/${created.body.run_id}`)).status).toBe(200);
  });

  it("audits a strategy's own credential by its id and the strategy's name, on behalf of its person", async () => {
    const origin = new URL(app.baseUrl).origin;
    const created = await request(origin)
      .post('/api/v1/agent/runs')
      .set('X-Test-Token', 'c0ffee')
      .send({ prompt: 'by-token-8d21', config: { harness: { type: 'sandbox-echo' } } });
    expect(created.status).toBe(200);
    const audited = await api.get('/audit-events?action=run.create&actor_id=test-token:c0ffee');
    expect(audited.status).toBe(200);
    expect(audited.body.events).toEqual([
      expect.objectContaining({
        actor: {
          type: 'api_key',
          id: 'test-token:c0ffee',
          name: 'credential of the "x-test-token" strategy',
          role: 'member',
          on_behalf_of: { type: 'user', id: expect.any(String), name: expect.any(String) },
        },
        target: { type: 'run', id: created.body.run_id },
      }),
    ]);
  });

  it('refuses a request no strategy recognises exactly as before: 401 authentication_required', async () => {
    const origin = new URL(app.baseUrl).origin;
    for (const req of [
      request(origin).get('/api/v1/agent/runs'),
      request(origin).get('/api/v1/agent/runs').set('Authorization', 'Bearer amb_not_a_key'),
      request(origin).get('/api/v1/agent/runs').set('X-Test-Usr', 'ada@example.com'),
    ]) {
      const res = await req;
      expect(res.status).toBe(401);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body).toMatchObject({
        status: 401,
        detail: 'send a valid API key as "Authorization: Bearer <key>"',
      });
      expect(res.body.type).toMatch(/authentication-required$/);
    }
  });

  it('fails start-up when AMBIENT_SANDBOX names a backend nobody registers', async () => {
    await expect(
      startTestApp(env, ['worker'], { 'sandbox.backend': 'no-such-backend' }, {}),
    ).rejects.toThrow(
      'AMBIENT_SANDBOX: must be one of auto, docker, bubblewrap, process (got "no-such-backend")',
    );
  });

  it('fails start-up naming the variable of a setting that is not of its declared type', async () => {
    await expect(
      startTestApp(env, ['worker'], {}, { extensions: [traced], env: { TRACED_DEPTH: 'deep' } }),
    ).rejects.toThrow(
      'TRACED_DEPTH: must be a number (got "deep"; a setting of extension traced-sandbox)',
    );
  });

  it('inits the extension once per process with its settings, and destroys it once on shutdown', async () => {
    expect(lifecycle).toEqual(['init mark-e2e 3 traced-process']);
    closed = true;
    await app.close();
    expect(lifecycle).toEqual(['init mark-e2e 3 traced-process', 'destroy']);
  });
});

/**
 * The self-hosted worker program loads the same AMBIENT_EXTENSIONS (here --extensions): their
 * harnesses and sandbox backends run the runs routed to it, their settings come from its own
 * environment, and their lifecycle follows the program's.
 */
describe('extensions: the self-hosted worker loads them too (--extensions)', () => {
  const FIXTURE = 'test/fixtures/extensions/traced-worker.js';
  const both = `${EXAMPLE},${FIXTURE}`;
  let env: TestEnvironment;
  let app: TestApp;
  let api: ReturnType<typeof apiClient>;
  let workerRoot: string;
  let traceFile: string;
  const workers = new SelfHostedWorkers();

  beforeAll(async () => {
    env = createTestEnvironment('extensions_selfhosted', 'http://127.0.0.1:9/v1');
    // The api validates the harness types: it loads the same extensions.
    app = await startTestApp(env, ['api'], { extensions: both });
    api = apiClient(app.baseUrl, app.apiKey);
    workerRoot = mkdtempSync(join(tmpdir(), 'ambient-ext-worker-'));
    traceFile = join(workerRoot, 'traced.log');
  });

  afterAll(async () => {
    await workers.killAll();
    await app?.close();
    await env?.destroy();
    if (workerRoot) rmSync(workerRoot, { recursive: true, force: true });
  });

  const finished = (runId: string) =>
    waitFor(
      async () => (await api.get(`/agent/runs/${runId}`)).body,
      (r) => ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(r.state),
      { what: `run ${runId} to finish`, timeoutMs: 60_000 },
    );

  it('runs extension harnesses in an extension sandbox backend on the worker, inits and destroys the extensions', async () => {
    const worker = await workers.start({
      apiUrl: app.baseUrl,
      workerId: 'ext-box',
      workspaceRoot: workerRoot,
      modelsFile: env.modelsFile,
      extra: ['--extensions', both, '--sandbox', 'traced-process'],
      vars: { TRACED_LOG: traceFile },
    });
    expect(worker.output()).toContain(
      'extension hello-ambient: hello-proxy recognises no one (HELLO_PROXY_SECRET is not set)',
    );

    const echo = await api.post('/agent/runs', {
      prompt: 'mark-3e9a',
      config: { harness: { type: 'sandbox-echo' }, worker_host: 'ext-box' },
    });
    expect(echo.status).toBe(200);
    const echoed = await finished(echo.body.run_id);
    expect(echoed.state).toBe('SUCCEEDED');
    expect(echoed.status_message?.message).toBe('process: in mark-3e9a (exit 0)');
    expect(readFileSync(traceFile, 'utf8').split('\n')).toContain(echo.body.run_id);
    expect(worker.output()).toContain(`claimed task ${echo.body.run_id}`);

    const hello = await api.post('/agent/runs', {
      prompt: 'hi from the box',
      config: { harness: { type: 'hello' }, worker_host: 'ext-box' },
    });
    const greeted = await finished(hello.body.run_id);
    expect(greeted.state).toBe('SUCCEEDED');
    expect(greeted.status_message?.message).toContain('Hello from hello-ambient!');

    worker.child.kill('SIGTERM');
    expect(await waitForExit(worker.child)).toBe(0);
    expect(readFileSync(traceFile, 'utf8').trim().split('\n').at(-1)).toBe('destroyed');
  });
});
