import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import { FakeModelServer, startFakeModelServer } from './fixtures/fake-model-server';
import { apiClient } from './support/api-client';
import {
  buildConsole,
  clickText,
  fill,
  freePort,
  launchChromium,
  step,
} from './support/console-browser';
import { createTestEnvironment, startTestApp, TestApp, TestEnvironment } from './support/test-app';

/**
 * The run form of a server whose default model cannot run (its provider has no key): the form
 * starts on an enabled model instead of the disabled default, so "Start run" works at once.
 */
describe('console run form with a disabled default model (Chromium)', () => {
  let model: FakeModelServer;
  let env: TestEnvironment;
  let app: TestApp;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    const consoleDir = buildConsole();
    model = await startFakeModelServer();
    env = createTestEnvironment('console-models', model.url);
    // The test catalogue with its key-less model (locked-model) as the default.
    const modelsFile = join(mkdtempSync(join(tmpdir(), 'ambient-models-')), 'models.yaml');
    writeFileSync(
      modelsFile,
      readFileSync(env.modelsFile, 'utf8').replace(
        'default_model_id: fake-model',
        'default_model_id: locked-model',
      ),
    );
    app = await startTestApp(env, ['api', 'worker'], {
      'server.port': await freePort(),
      'server.consoleDir': consoleDir,
      'models.file': modelsFile,
    });
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await env?.destroy();
    await model?.close();
  });

  beforeEach(async () => {
    page = await browser.newPage();
  });
  afterEach(() => page?.close());

  it('starts on the first enabled model, shows the default as unavailable, and runs on it', async () => {
    await step(page, 'disabled-default', async () => {
      await page.goto(`${new URL(app.baseUrl).origin}/console/`);
      await fill(page, 'API key', app.apiKey);
      await clickText(page, 'Sign in');
      await page.waitForSelector('nav[aria-label="Main"]');
      await clickText(page, 'New run');
      await page.waitForFunction(`document.querySelector('#run-model')?.value === 'fake-model'`, {
        timeout: 20_000,
      });
      const defaultOption = (await page.evaluate(
        `(o => ({ disabled: o.disabled, text: o.textContent }))(document.querySelector('#run-model option[value=""]'))`,
      )) as { disabled: boolean; text: string };
      expect(defaultOption).toEqual({
        disabled: true,
        text: 'Default (locked-model) — unavailable',
      });
      await fill(page, 'Prompt', 'Run on whatever can run');
      await clickText(page, 'Start run');
      await page.waitForSelector('[data-testid="run-state"]');
      const runId = page.url().split('/runs/')[1];
      const run = (await apiClient(app.baseUrl, app.apiKey).get(`/agent/runs/${runId}`)).body;
      expect(run.agent_config).toMatchObject({ model_id: 'fake-model' });
    });
  });
});
