import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { FakeModelServer, startFakeModelServer } from './fixtures/fake-model-server';
import { apiClient } from './support/api-client';
import { runCli } from './support/cli-process';
import { freePort } from './support/console-browser';
import { createTestEnvironment, REPO_ROOT, TestEnvironment } from './support/test-app';
import { waitFor } from './support/wait';
import { createFactory, createWebhook } from './support/webhook-helpers';
import { spawnAmbient, waitForExit } from './support/worker-process';

const README = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
const FIRST_RUN_START = README.indexOf('## First run in 5 minutes');
const FIRST_RUN = README.slice(FIRST_RUN_START, README.indexOf('\n## ', FIRST_RUN_START + 1));
const RECIPE_STEP = 'uncomment the two "local model" blocks, and set `default_model_id: local`';

/**
 * Step 2 of the README's recipe, on a copy of config/models.yaml in `dir`: the two "local model"
 * blocks uncommented and `default_model_id: local`. The stub listens where Ollama would (step 1).
 */
function modelsFileFromRecipe(stubUrl: string, dir: string): string {
  const lines = readFileSync(join(REPO_ROOT, 'config/models.yaml'), 'utf8').split('\n');
  let blocks = 0;
  let inBlock = false;
  const edited = lines.map((line) => {
    if (/# --- local model \(\w+\): uncomment the lines below ---$/.test(line)) {
      blocks += 1;
      inBlock = true;
      return line;
    }
    if (/# --- end of local model/.test(line)) inBlock = false;
    return inBlock ? line.replace(/^(\s*)# /, '$1') : line;
  });
  expect(blocks).toBe(2);
  const text = edited
    .join('\n')
    .replace(/^default_model_id: .*$/m, 'default_model_id: local')
    .replace('base_url: http://localhost:11434/v1', `base_url: ${stubUrl}`);
  const file = join(dir, 'recipe-models.yaml');
  writeFileSync(file, text);
  return file;
}

/** The words of a README command line (double quotes group words; no other shell syntax). */
function commandWords(line: string): string[] {
  return [...line.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]);
}

describe('first run in 5 minutes: the README recipe with a local OpenAI-compatible stub', () => {
  let model: FakeModelServer;
  let env: TestEnvironment;
  let ambient: ReturnType<typeof spawnAmbient>;
  let serverEnv: NodeJS.ProcessEnv;
  let apiPort: number;
  let ingressPort: number;
  let key: string;
  let runId: string;

  beforeAll(async () => {
    model = await startFakeModelServer();
    env = createTestEnvironment('first-run', model.url);
    [apiPort, ingressPort] = [await freePort(), await freePort()];
    // No public URL configured: links must follow these ports. No cloud key in the environment.
    serverEnv = env.childEnv({
      // Beside the environment's own catalogue: env.destroy() removes it.
      AMBIENT_MODELS_FILE: modelsFileFromRecipe(model.url, dirname(env.modelsFile)),
      AMBIENT_HOST: '127.0.0.1',
      AMBIENT_PORT: String(apiPort),
      AMBIENT_INGRESS_HOST: '127.0.0.1',
      AMBIENT_INGRESS_PORT: String(ingressPort),
    });
    ambient = spawnAmbient(serverEnv);
    await ambient.ready;
    key = /(amb_[A-Za-z0-9]{12}_[A-Za-z0-9]{32})/.exec(ambient.output())?.[1] ?? '';
  });

  afterAll(async () => {
    if (ambient && ambient.child.exitCode === null) {
      ambient.child.kill('SIGTERM');
      await waitForExit(ambient.child);
    }
    await env?.destroy();
    await model?.close();
  });

  it('starts with a summary naming the console, the API docs and the local model', () => {
    expect(FIRST_RUN).toContain(RECIPE_STEP);
    expect(key).not.toBe('');
    const output = ambient.output();
    const base = `http://127.0.0.1:${apiPort}`;
    expect(output).toMatch(
      new RegExp(`console (on|not built \\(npm run build, then) ${base}/console/`),
    );
    expect(output).toContain(`API docs on ${base}/api/docs`);
    expect(output).toContain('models local (default local)');
  });

  it("runs the README's CLI command to SUCCEEDED on the local model", async () => {
    const line = FIRST_RUN.split('\n').find((l) => l.startsWith('npm run cli -- runs create'));
    const args = commandWords(line!).slice(4);
    expect(args).toEqual(expect.arrayContaining(['runs', 'create', '--prompt', '--watch']));
    // No AMBIENT_API_URL: the CLI finds the API from the same settings as the server.
    const result = await runCli(args, { ...serverEnv, AMBIENT_API_KEY: key });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    runId = result.stdout.split('\n')[0];
    expect(result.stdout.trimEnd().split('\n').at(-1)).toMatch(/state SUCCEEDED: Done\.$/);
    expect(model.requests.map((r) => r.body.model)).toContain('qwen3:8b');
    // Logged (if at all) right after the summary, long before the run ended.
    expect(ambient.output()).not.toMatch(/no model is enabled|PublicUrls/);
  });

  it('gives links that follow the listening ports (no public URL configured)', async () => {
    const base = `http://127.0.0.1:${apiPort}`;
    const api = apiClient(`${base}/api/v1`, key);
    const run = (await api.get(`/agent/runs/${runId}`)).body;
    expect(run.session_link).toBe(`${base}/console/runs/${runId}`);

    const child = await api.post('/agent/runs', { prompt: 'A child', parent_run_id: runId });
    expect(child.status).toBe(200);
    const childRun = (await api.get(`/agent/runs/${child.body.run_id}`)).body;
    expect(childRun.trigger_url).toBe(`${base}/api/v1/agent/runs/${runId}`);

    const openapi = (await api.get('/openapi.json')).body;
    expect(openapi.servers).toEqual([{ url: `${base}/api/v1` }]);

    // `curl -L` of the transcript: the redirect names this listener and its URL answers.
    const redirect = await fetch(`${base}/api/v1/agent/runs/${runId}/transcript`, {
      headers: { Authorization: `Bearer ${key}` },
      redirect: 'manual',
    });
    expect(redirect.status).toBe(302);
    const location = redirect.headers.get('location')!;
    expect(location.startsWith(`${base}/`)).toBe(true);
    expect((await fetch(location)).status).toBe(200);

    const factory = await createFactory(api);
    const webhook = await createWebhook(api, factory, { name: 'first-run' });
    const hooks = `http://127.0.0.1:${ingressPort}`;
    expect(webhook.url.startsWith(`${hooks}/webhooks/w/${webhook.uid}`)).toBe(true);
    const listed = await runCli(['webhooks', 'list', '--factory', factory], {
      ...serverEnv,
      AMBIENT_API_KEY: key,
    });
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(`${hooks}/webhooks/w/${webhook.uid}`);
    // The URL reaches the ingress (which refuses a delivery without the webhook's token).
    expect((await fetch(webhook.url, { method: 'POST', body: '{}' })).status).toBe(401);
    await waitFor(
      () => api.runState(child.body.run_id),
      (state) => state === 'SUCCEEDED',
      { what: 'the child run to finish' },
    );
  });

  it('warns at start-up about a public URL of another port and a catalogue with no model', async () => {
    const other = spawnAmbient(
      env.childEnv({
        AMBIENT_ROLES: 'api',
        AMBIENT_HOST: '127.0.0.1',
        AMBIENT_PORT: '0',
        AMBIENT_PUBLIC_URL: 'http://127.0.0.1:1',
        AMBIENT_MODELS_FILE: 'config/models.yaml',
      }),
    );
    try {
      await other.ready;
      expect(other.output()).toMatch(
        /AMBIENT_PUBLIC_URL http:\/\/127\.0\.0\.1:1 points at port 1 of this machine.*\(the API listens on port \d+\)/,
      );
      // Logged just after the summary line that `ready` waits for.
      await waitFor(
        async () => other.output(),
        (output) => output.includes('no model is enabled, so no run can start'),
        { what: 'the model warning' },
      );
      expect(other.output()).toContain(
        'no model is enabled, so no run can start: set a provider key (OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY)',
      );
      expect(other.output()).toContain('models: none enabled');
    } finally {
      other.child.kill('SIGTERM');
      await waitForExit(other.child);
    }
  });
});
