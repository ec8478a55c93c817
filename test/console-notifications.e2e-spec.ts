import { Webhook } from 'standardwebhooks';
import { NotificationReceiver, startNotificationReceiver } from './fixtures/notification-receiver';
import {
  buildConsole,
  clickText,
  fill,
  freePort,
  step,
  useChromium,
  waitForText,
} from './support/console-browser';
import { useTestApp } from './support/use-test-app';
import { waitFor } from './support/wait';

/**
 * The console's Notifications page in Chromium: an admin adds an endpoint (its signing secret
 * shown once), a run ends, and the endpoint's delivery log shows the delivery the receiver got.
 */
describe('console notifications page (Chromium)', () => {
  // Declared first, so its afterAll closes the browser before the app closes (hooks run in order).
  const chromium = useChromium();
  let receiver: NotificationReceiver;
  let settings: Record<string, unknown>;

  beforeAll(async () => {
    receiver = await startNotificationReceiver();
    settings = {
      'server.port': await freePort(),
      'server.consoleDir': buildConsole(),
      'egress.allow': `127.0.0.1:${receiver.port}`,
    };
  }, 120_000);
  afterAll(() => receiver?.close());
  const { api, app } = useTestApp('console-notify', ['api', 'worker'], () => settings);

  it('adds an endpoint, shows its secret once and the delivery of a cancelled run in its log', async () => {
    const { page } = chromium;
    await step(page, 'notifications-admin', async () => {
      await page.goto(`${new URL(app.baseUrl).origin}/console/`);
      await fill(page, 'API key', app.apiKey);
      await clickText(page, 'Sign in');
      await page.waitForSelector('nav[aria-label="Main"]');
      await clickText(page, 'Notifications');
      await waitForText(page, 'No endpoints yet');

      await fill(page, 'URL', `${receiver.url}/console`);
      await clickText(page, 'Run cancelled', 'label');
      await fill(page, 'Format', 'standard');
      await clickText(page, 'Add endpoint');
      await waitForText(page, 'is shown only now');
      const secret = (await page.evaluate(
        `document.querySelector('.shown-once code').textContent`,
      )) as string;
      expect(secret).toMatch(/^whsec_/);
      const [endpoint] = (await api.get('/notification-endpoints')).body.endpoints as {
        events: string[];
      }[];
      expect(endpoint.events).toEqual(['run.failed', 'run.cancelled']);

      const runId = (await api.post('/agent/runs', { prompt: 'Wait for me' })).body
        .run_id as string;
      expect((await api.post(`/agent/runs/${runId}/cancel`)).status).toBe(200);
      const request = await waitFor(
        async () => receiver.received.find((r) => r.body.includes(runId)),
        (r) => !!r,
        { what: 'the notification of the cancelled run' },
      );
      const verified = new Webhook(secret).verify(
        request!.body,
        request!.headers as Record<string, string>,
      );
      expect(verified).toMatchObject({ type: 'run.cancelled' });

      const row = `[...document.querySelectorAll('table[aria-label="Notification deliveries"] tbody tr')][0]`;
      await page.waitForFunction(`!!${row} && ${row}.innerText.includes('succeeded')`);
      const cells = (await page.evaluate(`[...${row}.cells].map(c => c.innerText)`)) as string[];
      expect(cells.slice(1, 5)).toEqual(['run.cancelled', 'succeeded', '1', '200']);
    });
  });
});
