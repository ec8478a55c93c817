import {
  buildConsole,
  fill,
  clickText,
  freePort,
  step,
  useChromium,
  waitForText,
} from './support/console-browser';
import { useTestApp } from './support/use-test-app';
import { waitFor } from './support/wait';
import { createFactory, createWebhook, deliver } from './support/webhook-helpers';

/**
 * The console with an automation pinning `locked-model` (in the catalogue, but its provider key is
 * unset): saving it warns, and the delivery log marks its delivery "Run refused" and says why.
 */
describe('console delivery log: a run that could not start (Chromium)', () => {
  // Declared first, so its afterAll closes the browser before the app closes (hooks run in order).
  const chromium = useChromium();
  let settings: Record<string, unknown>;

  beforeAll(async () => {
    settings = { 'server.port': await freePort(), 'server.consoleDir': buildConsole() };
  }, 120_000);
  const { api, app } = useTestApp('console-refused', ['api', 'ingress', 'worker'], () => settings);

  it('warns when an automation is saved with a model that is not enabled, then marks its delivery "Run refused" with the reason', async () => {
    const factory = await createFactory(api, 'Refused in console');
    const hook = await createWebhook(api, factory, { name: 'alerts' });
    const { page } = chromium;
    const origin = new URL(app.baseUrl).origin;
    await step(page, 'automation-warning', async () => {
      await page.goto(`${origin}/console/`);
      await fill(page, 'API key', app.apiKey);
      await clickText(page, 'Sign in');
      await page.waitForSelector('nav[aria-label="Main"]');
      await page.goto(`${origin}/console/webhooks?factory=${factory}`);
      // The webhooks' table loads above the button and moves it: a click before lands on its
      // row's Open (the page then shows that webhook, and the form never opens).
      await waitForText(page, 'Bearer token');
      await clickText(page, 'New automation');
      await fill(page, 'Automation name', 'pinned');
      await clickText(page, 'alerts', 'label');
      await fill(page, 'Model (optional)', 'locked-model');
      await fill(page, 'Prompt', 'Triage the alert.');
      await clickText(page, 'Create automation');
      await waitForText(page, 'Saved the automation pinned');
      await waitForText(
        page,
        'Warning: model "locked-model" is not enabled (provider key AMBIENT_TEST_NEVER_SET_KEY is not set)',
      );
    });

    const sent = await deliver(`${app.ingressUrl}/webhooks/w/${hook.uid}`, '{"alert":"disk"}', {
      Authorization: `Bearer ${hook.secret}`,
      'X-Ambient-Delivery-Id': 'alert-console',
    });
    expect(sent.status).toBe(202);
    await waitFor(
      async () =>
        (
          (await api.get(`/factory/${factory}/webhooks/${hook.uid}/deliveries`)).body
            .deliveries as { evaluated_at: string | null }[]
        )[0],
      (entry) => !!entry?.evaluated_at,
      { what: 'the delivery to be evaluated' },
    );

    await step(page, 'delivery-refused', async () => {
      await page.goto(
        `${origin}/console/webhooks?factory=${factory}&webhook=${hook.uid}&delivery=alert-console`,
      );
      await waitForText(page, 'Run refused');
      const row =
        (await page.$eval('table[aria-label="Deliveries"] tbody', (t) => t.textContent)) ?? '';
      expect(row).toContain('Accepted');
      expect(row).toContain(
        'pinned: Invalid request: config.model_id: model "locked-model" is unavailable',
      );
      await page.waitForSelector('ul[aria-label="Run outcomes"]');
      const outcome = await page.$eval('ul[aria-label="Run outcomes"]', (u) => u.textContent);
      expect(outcome).toBe(
        'pinned: no run started: Invalid request: config.model_id: model "locked-model" is unavailable: provider key AMBIENT_TEST_NEVER_SET_KEY is not set',
      );
    });
  });
});
