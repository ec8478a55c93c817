import type { Page } from 'puppeteer-core';
import { apiClient } from './support/api-client';
import {
  buildConsole,
  clickText,
  fill,
  freePort,
  horizontalOverflow,
  step,
  useChromium,
  waitForText,
} from './support/console-browser';
import { useTestApp } from './support/use-test-app';

/** `date` as a datetime-local input shows it: local time, to the minute. */
function localMinute(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/**
 * The console's API keys page in Chromium: an admin creates a key (shown once, and it works),
 * sees it listed and revokes it (then it is refused); a viewer gets a clear refusal instead.
 */
describe('console API keys page (Chromium)', () => {
  // Declared first, so its afterAll closes the browser before the app closes (hooks run in order).
  const chromium = useChromium();
  let settings: Record<string, unknown>;

  beforeAll(async () => {
    settings = { 'server.port': await freePort(), 'server.consoleDir': buildConsole() };
  }, 120_000);
  const { api, app } = useTestApp('console-keys', ['api'], () => settings, { model: false });

  async function signIn(page: Page, key: string) {
    await page.goto(`${new URL(app.baseUrl).origin}/console/`);
    await fill(page, 'API key', key);
    await clickText(page, 'Sign in');
    await page.waitForSelector('nav[aria-label="Main"]');
    await clickText(page, 'API keys');
  }

  it('lets an admin create a key shown once (it works), list it and revoke it (then it is refused)', async () => {
    const { page } = chromium;
    await step(page, 'api-keys-admin', async () => {
      await signIn(page, app.apiKey);
      await fill(page, 'Key name', 'ci-bot');
      await fill(page, 'Role', 'viewer');
      const expires = localMinute(new Date(Date.now() + 2 * 86_400_000));
      // A datetime-local input does not take typed text portably: set it as React sees input.
      await page.$eval(
        '#api-key-expires',
        (el, value) => {
          const input = el as unknown as { value: string; dispatchEvent(e: unknown): void };
          const proto = Object.getPrototypeOf(input) as object;
          Object.getOwnPropertyDescriptor(proto, 'value')?.set?.call(input, value);
          input.dispatchEvent(new Event('input', { bubbles: true }));
        },
        expires,
      );
      await clickText(page, 'Create key');
      await waitForText(page, 'you will not see it again');
      const key = (await page.evaluate(
        `document.querySelector('.shown-once code').textContent`,
      )) as string;
      const asBot = apiClient(app.baseUrl, key);
      expect((await asBot.get('/agent/runs')).status).toBe(200);

      const listed = (await api.get('/api-keys')).body.api_keys as {
        name: string;
        role: string;
        prefix: string;
        expires_at: string | null;
      }[];
      const bot = listed.find((k) => k.name === 'ci-bot');
      expect(bot).toMatchObject({ role: 'viewer', expires_at: new Date(expires).toISOString() });
      const row = `[...document.querySelectorAll('table[aria-label="API keys"] tbody tr')].find(r => r.cells[0].textContent === 'ci-bot')`;
      await page.waitForFunction(`!!${row}`);
      const cells = (await page.evaluate(`[...${row}.cells].map(c => c.textContent)`)) as string[];
      expect(cells.slice(0, 3)).toEqual(['ci-bot', 'viewer', bot?.prefix]);
      expect(key).toContain(`amb_${bot?.prefix}_`);
      expect(cells[6]).toContain('active');
      expect(await horizontalOverflow(page)).toBeLessThanOrEqual(0);

      await clickText(page, 'Revoke ci-bot');
      await page.waitForSelector('dialog[open]');
      await page.click('dialog[open] button[value="yes"]');
      await page.waitForFunction(`${row}.cells[6].textContent.includes('revoked')`);
      expect((await asBot.get('/agent/runs')).status).toBe(401);
      // Only that key: the admin's own still works.
      expect((await api.get('/agent/runs')).status).toBe(200);
    });
  });

  it("tells a viewer that only an admin manages keys, with the server's reason, and offers no actions", async () => {
    const created = await api.post('/api-keys', { name: 'reader', role: 'viewer' });
    expect(created.status).toBe(201);
    const { page } = chromium;
    await step(page, 'api-keys-viewer', async () => {
      await signIn(page, created.body.key as string);
      await waitForText(page, 'Only an admin can see and manage');
      await waitForText(page, '403');
      expect(await page.$('#api-key-name')).toBeNull();
      expect(await page.$('table[aria-label="API keys"]')).toBeNull();
      // Still signed in: a 403 is not a 401.
      expect(await page.$('nav[aria-label="Main"]')).not.toBeNull();
    });
  });
});
