/**
 * `npm run console:screenshots`: boots Ambient (api + ingress + worker, MariaDB and Redis as for
 * the tests, the fake model server), fills it with a few runs, a schedule, a webhook with a
 * delivery, an identity and an environment, and saves one 1280 px screenshot per console page
 * into docs/console/ (the README's pictures).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'puppeteer-core';
import { startFakeModelServer } from '../../test/fixtures/fake-model-server';
import { apiClient } from '../../test/support/api-client';
import {
  buildConsole,
  clickText,
  fill,
  freePort,
  launchChromium,
  waitForRunState,
  waitForText,
} from '../../test/support/console-browser';
import { createTestEnvironment, REPO_ROOT, startTestApp } from '../../test/support/test-app';
import { waitFor } from '../../test/support/wait';
import {
  createFactory,
  createWebhook,
  deliver,
  standardWebhooksHeaders,
} from '../../test/support/webhook-helpers';

const OUT = join(REPO_ROOT, 'docs', 'console');

async function main(): Promise<void> {
  const consoleDir = buildConsole();
  const model = await startFakeModelServer();
  const env = createTestEnvironment('console_shots', model.url);
  const port = await freePort();
  const app = await startTestApp(env, ['api', 'ingress', 'worker'], {
    'server.port': port,
    'server.publicUrl': `http://127.0.0.1:${port}`,
    'server.consoleDir': consoleDir,
    'webhooks.sweepIntervalMs': 200,
    'webhooks.sweepGraceMs': 300,
  });
  const api = apiClient(app.baseUrl, app.apiKey);
  const origin = new URL(app.baseUrl).origin;
  const browser = await launchChromium();
  try {
    const { runId, failedRunId, buildingRunId } = await seed(api, app.ingressUrl, model);
    const page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 800 });
    mkdirSync(OUT, { recursive: true });
    const shot = (name: string) =>
      page.screenshot({ path: join(OUT, `${name}.png`), fullPage: true });

    await page.goto(`${origin}/console/`);
    await page.waitForSelector('#api-key');
    await shot('sign-in');
    await fill(page, 'API key', app.apiKey);
    await clickText(page, 'Sign in');
    await waitForText(page, 'Release notes');
    await shot('runs');
    await page.goto(`${origin}/console/runs/${runId}`);
    await waitForRunState(page, 'SUCCEEDED');
    await waitForText(page, 'CHANGELOG.md');
    await shot('run-detail');
    await page.goto(`${origin}/console/runs/${failedRunId}`);
    await waitForRunState(page, 'FAILED');
    await shot('run-failed');
    // A command still running: spinner, timer and its output so far; then it is let finish.
    await page.goto(`${origin}/console/runs/${buildingRunId}`);
    await page.waitForSelector('[data-testid="command-running"]');
    await page.waitForFunction(
      `document.querySelector('[data-testid="command-output"]')?.innerText.includes('Compiled 42 modules')`,
    );
    await shot('run-running');
    writeFileSync(join(env.workspaceRoot, buildingRunId, 'release'), '');
    await waitForRunState(page, 'SUCCEEDED', 60_000);
    await page.setViewport({ width: 390, height: 844 });
    await visit(page, origin, '/runs', 'Release notes');
    await shot('runs-phone');
    await page.setViewport({ width: 1280, height: 800 });
    await visit(page, origin, '/runs/new', 'Start run');
    await fill(page, 'Prompt', 'Summarise the open issues');
    await shot('new-run');
    await visit(page, origin, '/schedules', 'nightly-triage');
    await clickText(page, 'New schedule');
    await fill(page, 'Cron expression (UTC)', '0 6 * * 1-5');
    await shot('schedules');
    await visit(page, origin, '/webhooks', 'deploys');
    await page.click('button[aria-label="Open webhook deploys"]');
    await waitForText(page, 'Accepted');
    await page.waitForSelector('table[aria-label="Deliveries"] a');
    await clickText(page, 'Details');
    // The automations load on their own: test against triage once it is listed.
    await page.waitForSelector('#test-automation option[value="triage"]');
    await clickText(page, 'Run test filter');
    await waitForText(page, 'Would trigger');
    await shot('webhooks');
    await visit(page, origin, '/identities', 'release-bot');
    await page.click('button[aria-label="Keys of release-bot"]');
    await waitForText(page, 'ci');
    await shot('identities');
    await visit(page, origin, '/environments', 'node-22');
    await shot('environments');
    await visit(page, origin, '/models', 'Fake model');
    await shot('models');
    console.log(`wrote ${OUT}/*.png`);
  } finally {
    await browser.close();
    await app.close();
    await env.destroy();
    await model.close();
  }
}

async function visit(page: Page, origin: string, route: string, text: string): Promise<void> {
  await page.goto(`${origin}/console${route}`);
  await waitForText(page, text);
}

async function seed(
  api: ReturnType<typeof apiClient>,
  ingressUrl: string,
  model: Awaited<ReturnType<typeof startFakeModelServer>>,
): Promise<{ runId: string; failedRunId: string; buildingRunId: string }> {
  model.script('shots-notes', [
    {
      toolCalls: [
        {
          name: 'run_command',
          arguments: {
            command: 'printf "## 1.4.0\\n- Faster runs\\n" > CHANGELOG.md && cat CHANGELOG.md',
          },
        },
      ],
    },
    { text: 'Wrote CHANGELOG.md with the 1.4.0 notes.' },
  ]);
  model.script('shots-quick', [{ text: 'Done.' }]);
  model.script('shots-import', [
    { toolCalls: [{ name: 'run_command', arguments: { command: 'sleep 600' } }] },
  ]);
  model.script('shots-build', [
    {
      toolCalls: [
        {
          name: 'run_command',
          arguments: {
            command:
              'echo "> web@1.4.0 build"; echo "Compiling…"; echo "Compiled 42 modules"; ' +
              'while [ ! -f release ]; do sleep 0.2; done; echo "Built in 12.4 s"',
          },
        },
      ],
    },
    { text: 'The build passes.' },
  ]);
  model.script('shots-hook', [{ text: 'Triaged the deployment.' }]);
  const environment = await api.post('/agent/environments', {
    name: 'node-22',
    description: 'Node 22 with the repository checked out',
    github_repos: [{ owner: 'acme', repo: 'web' }],
    setup_commands: ['npm ci'],
    network: 'none',
  });
  const broken = await api.post('/agent/environments', {
    name: 'broken-setup',
    setup_commands: ['npm run build-that-fails || exit 3'],
  });
  const failed = await api.post('/agent/runs', {
    prompt: 'Build the site',
    title: 'Build with a broken setup',
    config: { environment_id: broken.body.uid },
  });
  const created = await api.post('/agent/runs', {
    prompt: 'Write the release notes into CHANGELOG.md [script:shots-notes]',
    title: 'Release notes',
    config: { model_id: 'fake-model' },
  });
  const runId = created.body.run_id as string;
  await api.post('/agent/runs', {
    prompt: 'Check the build [script:shots-quick]',
    title: 'Check the build',
  });
  await waitFor(
    async () => (await api.get(`/agent/runs/${runId}`)).body.state,
    (state) => state === 'SUCCEEDED',
    { what: 'the release notes run', timeoutMs: 60_000 },
  );
  await api.post('/agent/schedules', {
    name: 'nightly-triage',
    cron_schedule: '30 2 * * *',
    prompt: 'Triage new issues',
    enabled: true,
    agent_config: { environment_id: environment.body.uid },
  });
  const identity = await api.post('/agent/identities', { name: 'release-bot' });
  await api.post(`/agent/identities/${identity.body.uid}/api-keys`, { name: 'ci' });
  const factory = await createFactory(api, 'Operations');
  const hook = await createWebhook(api, factory, {
    name: 'deploys',
    auth_mode: 'signature',
    signature_scheme: 'standard_webhooks',
  });
  const files = (await api.get(`/factory/${factory}/definition`)).body.files as object[];
  await api.put(`/factory/${factory}/definition`, {
    files: [
      ...files,
      {
        path: 'automations/triage/automation.md',
        content: `---\nmodel: fake-model\ntriggers:\n  - provider: webhook\n    event: received\n    filter:\n      webhook_ids: [${hook.uid}]\n      payload:\n        event: [deploy.finished]\n---\nTriage the deployment [script:shots-hook]\n`,
      },
    ],
  });
  const body = JSON.stringify({ event: 'deploy.finished', service: 'api', env: 'production' });
  await deliver(`${ingressUrl}/webhooks/w/${hook.uid}`, body, {
    'content-type': 'application/json',
    ...standardWebhooksHeaders(hook.secret as string, 'msg_deploy_1', body),
  });
  const failedRunId = failed.body.run_id as string;
  await waitFor(
    async () => (await api.get(`/agent/runs/${failedRunId}`)).body.state,
    (state) => state === 'FAILED',
    { what: 'the broken setup run', timeoutMs: 60_000 },
  );
  // A cancelled run (grey in the list), then one whose command runs while the pictures are taken.
  const importing = await api.post('/agent/runs', {
    prompt: 'Import the nightly data [script:shots-import]',
    title: 'Nightly import',
  });
  const importId = importing.body.run_id as string;
  await waitFor(
    async () => (await api.get(`/agent/runs/${importId}/timeline`)).body.events as object[],
    (events) => JSON.stringify(events).includes('command_started'),
    { what: 'the import to run its command', timeoutMs: 60_000 },
  );
  await api.post(`/agent/runs/${importId}/cancel`);
  const building = await api.post('/agent/runs', {
    prompt: 'Build the site and check it passes [script:shots-build]',
    title: 'Build the site',
  });
  return { runId, failedRunId, buildingRunId: building.body.run_id as string };
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
