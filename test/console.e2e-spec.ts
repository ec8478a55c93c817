import type { Browser, Page } from 'puppeteer-core';
import { FakeModelServer, startFakeModelServer } from './fixtures/fake-model-server';
import { apiClient } from './support/api-client';
import {
  buildConsole,
  clickText,
  fill,
  horizontalOverflow,
  launchChromium,
  step,
  waitForRunState,
  waitForText,
} from './support/console-browser';
import { createTestEnvironment, startTestApp, TestApp, TestEnvironment } from './support/test-app';
import { waitFor } from './support/wait';

/**
 * The web console in a real Chromium against a real Ambient (api + ingress + worker, fake model
 * server): one browser for the whole file, a page per test.
 */
describe('web console (Chromium)', () => {
  let model: FakeModelServer;
  let env: TestEnvironment;
  let app: TestApp;
  let api: ReturnType<typeof apiClient>;
  let browser: Browser;
  let page: Page;
  let origin: string;

  beforeAll(async () => {
    const consoleDir = buildConsole();
    model = await startFakeModelServer();
    env = createTestEnvironment('console', model.url);
    app = await startTestApp(env, ['api', 'ingress', 'worker'], {
      'server.consoleDir': consoleDir,
      'webhooks.sweepIntervalMs': 200,
      'webhooks.sweepGraceMs': 300,
    });
    api = apiClient(app.baseUrl, app.apiKey);
    origin = new URL(app.baseUrl).origin;
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
  afterEach(async () => {
    await page?.close();
  });

  async function signIn(key = app.apiKey) {
    await page.goto(`${origin}/console/`);
    await fill(page, 'API key', key);
    await clickText(page, 'Sign in');
    await page.waitForSelector('nav[aria-label="Main"]');
  }

  it('signs in with a key, refuses a bad one with a clear message, signs out', async () => {
    await step(page, 'sign-in', async () => {
      await page.goto(`${origin}/console/`);
      await fill(page, 'API key', 'amb_not_a_key');
      await clickText(page, 'Sign in');
      await waitForText(page, '401');
      await signIn();
      await waitForText(page, 'Runs');
      await clickText(page, 'Sign out');
      await waitForText(page, 'Signed out.');
      expect(await page.evaluate('sessionStorage.length')).toBe(0);
    });
  });

  it('creates a run from the form and watches it reach SUCCEEDED live, with its tool output', async () => {
    model.script('console-live', [
      {
        delayMs: 1500,
        then: {
          toolCalls: [{ name: 'run_command', arguments: { command: 'echo console-tool-output' } }],
        },
      },
      { text: 'All done from the console run.' },
    ]);
    await step(page, 'live-run', async () => {
      await signIn();
      await clickText(page, 'New run');
      await fill(page, 'Prompt', 'Say hello [script:console-live]');
      await fill(page, 'Model', 'fake-model');
      await fill(page, 'Title (optional)', 'Console live run');
      // The unavailable model is listed with its reason and cannot be picked.
      const locked = (await page.evaluate(
        `(o => ({ disabled: o.disabled, text: o.textContent }))(document.querySelector('#run-model option[value="locked-model"]'))`,
      )) as { disabled: boolean; text: string };
      expect(locked.disabled).toBe(true);
      expect(locked.text).toMatch(/unavailable/);
      await clickText(page, 'Start run');
      await page.waitForSelector('[data-testid="run-state"]');
      const runId = page.url().split('/runs/')[1];
      // A marker on window survives only if the page is never reloaded.
      await page.evaluate('window.notReloaded = true');
      await waitForRunState(page, 'SUCCEEDED');
      expect(await page.evaluate('window.notReloaded')).toBe(true);
      expect((await api.get(`/agent/runs/${runId}`)).body.state).toBe('SUCCEEDED');
      await waitForText(page, 'All done from the console run.');
      await waitForText(page, 'console-tool-output');
      await waitForText(page, 'oz_run_done');
      const text = (await page.evaluate('document.body.innerText')) as string;
      expect(text).toContain('tool call');
      expect(text).toContain('run_command');
    });
  });

  it('cancels a running run after confirming, and shows the answer', async () => {
    model.script('console-hang', [{ hang: true }]);
    const created = await api.post('/agent/runs', { prompt: 'Wait forever [script:console-hang]' });
    const runId = created.body.run_id as string;
    await waitFor(
      async () => (await api.get(`/agent/runs/${runId}`)).body.state,
      (state) => state === 'INPROGRESS',
      { what: 'the run to start' },
    );
    await step(page, 'cancel-run', async () => {
      await signIn();
      await page.goto(`${origin}/console/runs/${runId}`);
      await waitForText(page, 'INPROGRESS');
      await clickText(page, 'Cancel run');
      await page.waitForSelector('dialog[open]');
      await page.click('dialog[open] button[value="yes"]');
      await waitForText(page, 'Cancel accepted');
      await waitForRunState(page, 'CANCELLED');
      expect((await api.get(`/agent/runs/${runId}`)).body.state).toBe('CANCELLED');
    });
  });

  it('lists runs with filters and fits a 390 px wide screen', async () => {
    await step(page, 'runs-list-narrow', async () => {
      await signIn();
      await page.setViewport({ width: 390, height: 844 });
      await page.goto(`${origin}/console/runs`);
      await waitForText(page, 'Console live run');
      await fill(page, 'State', 'CANCELLED');
      await clickText(page, 'Apply');
      await page.waitForFunction(`!document.body.innerText.includes('Console live run')`);
      await waitForText(page, 'CANCELLED');
      expect(await horizontalOverflow(page)).toBeLessThanOrEqual(0);
    });
  });
});
