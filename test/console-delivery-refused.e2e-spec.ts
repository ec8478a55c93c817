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
 * The console's delivery log for a delivery whose automation could not start its run (it pins
 * `locked-model`, whose provider key is unset): the entry is marked "Run refused" and its detail
 * says why.
 */
describe('console delivery log: a run that could not start (Chromium)', () => {
  // Declared first, so its afterAll closes the browser before the app closes (hooks run in order).
  const chromium = useChromium();
  let settings: Record<string, unknown>;

  beforeAll(async () => {
    settings = { 'server.port': await freePort(), 'server.consoleDir': buildConsole() };
  }, 120_000);
  const { api, app } = useTestApp('console-refused', ['api', 'ingress', 'worker'], () => settings);

  it('marks the delivery "Run refused" and shows the reason in its detail', async () => {
    const factory = await createFactory(api, 'Refused in console');
    const hook = await createWebhook(api, factory, { name: 'alerts' });
    const files = (await api.get(`/factory/${factory}/definition`)).body.files as object[];
    const automation = {
      path: 'automations/pinned/automation.md',
      content: `---\nmodel: locked-model\ntriggers:\n  - provider: webhook\n    event: received\n    filter:\n      webhook_ids: [${hook.uid}]\n---\nTriage the alert.\n`,
    };
    const put = await api.put(`/factory/${factory}/definition`, { files: [...files, automation] });
    expect(put.status).toBe(200);
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

    const { page } = chromium;
    await step(page, 'delivery-refused', async () => {
      const origin = new URL(app.baseUrl).origin;
      await page.goto(`${origin}/console/`);
      await fill(page, 'API key', app.apiKey);
      await clickText(page, 'Sign in');
      await page.waitForSelector('nav[aria-label="Main"]');
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
