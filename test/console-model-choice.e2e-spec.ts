import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import {
  buildConsole,
  clickText,
  fill,
  freePort,
  step,
  useChromium,
} from './support/console-browser';
import { useTestApp } from './support/use-test-app';

/**
 * A copy of the test catalogue whose default is its key-less model (locked-model), beside it in
 * the environment's directory (env.destroy() removes it).
 */
function withDisabledDefault(modelsFile: string): string {
  const file = join(dirname(modelsFile), 'disabled-default.yaml');
  const text = readFileSync(modelsFile, 'utf8');
  writeFileSync(
    file,
    text.replace('default_model_id: fake-model', 'default_model_id: locked-model'),
  );
  return file;
}

/**
 * The run form of a server whose default model cannot run (its provider has no key): the form
 * starts on an enabled model instead of the disabled default, so "Start run" works at once.
 */
describe('console run form with a disabled default model (Chromium)', () => {
  // Declared first, so its afterAll closes the browser before the app closes (hooks run in order).
  const chromium = useChromium();
  let settings: Record<string, unknown>;

  beforeAll(async () => {
    settings = { 'server.port': await freePort(), 'server.consoleDir': buildConsole() };
  }, 120_000);
  const { api, app, env } = useTestApp('console-models', ['api', 'worker'], () => ({
    ...settings,
    'models.file': withDisabledDefault(env.modelsFile),
  }));

  it('starts on the first enabled model, shows the default as unavailable, and runs on it', async () => {
    const { page } = chromium;
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
      // Its provider key is simply not set: the form says that, not an administrator's choice.
      const locked = (await page.evaluate(
        `document.querySelector('#run-model option[value="locked-model"]').textContent`,
      )) as string;
      expect(locked).toBe(
        'Model without a key (locked-model) — unavailable: Provider key not set (AMBIENT_TEST_NEVER_SET_KEY)',
      );
      const models = (await api.get('/agent/models')).body.models as Record<string, unknown>[];
      expect(models.find((m) => m.id === 'locked-model')).toMatchObject({
        disabled: true,
        disable_reason: 'ADMIN_DISABLED',
        missing_provider_key: true,
        provider_key_env: 'AMBIENT_TEST_NEVER_SET_KEY',
      });
      expect(models.find((m) => m.id === 'fake-model')).not.toHaveProperty('missing_provider_key');
      await fill(page, 'Prompt', 'Run on whatever can run');
      await clickText(page, 'Start run');
      await page.waitForSelector('[data-testid="run-state"]');
      const runId = page.url().split('/runs/')[1];
      const run = (await api.get(`/agent/runs/${runId}`)).body;
      expect(run.agent_config).toMatchObject({ model_id: 'fake-model' });

      await page.goto(`${new URL(app.baseUrl).origin}/console/models`);
      await page.waitForSelector('table[aria-label="Models"]');
      const availability = (await page.evaluate(
        `[...document.querySelectorAll('main tbody tr')].find((tr) => tr.innerText.includes('locked-model')).querySelector('.col-availability').innerText`,
      )) as string;
      expect(availability).toBe('Provider key not set (AMBIENT_TEST_NEVER_SET_KEY)');
    });
  });
});
