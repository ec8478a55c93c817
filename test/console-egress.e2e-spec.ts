import type { Page } from 'puppeteer-core';
import { newUuid } from '../src/common/ids';
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

/**
 * The console's side of the egress allowlist in Chromium: the run page's "Blocked hosts" with an
 * admin's "Allow in this environment", and the environment form's network and allowed hosts.
 */
describe('console egress allowlist (Chromium)', () => {
  // Declared first, so its afterAll closes the browser before the app closes (hooks run in order).
  const chromium = useChromium();
  let settings: Record<string, unknown>;

  beforeAll(async () => {
    const port = await freePort();
    settings = {
      'server.port': port,
      'server.publicUrl': `http://127.0.0.1:${port}`,
      'server.consoleDir': buildConsole(),
    };
  }, 120_000);
  const { api, app } = useTestApp('console-egress', ['api'], () => settings, { model: false });

  const origin = () => new URL(app.baseUrl).origin;

  async function signIn(page: Page, key = app.apiKey) {
    await page.goto(`${origin()}/console/`);
    await fill(page, 'API key', key);
    await clickText(page, 'Sign in');
    await page.waitForSelector('nav[aria-label="Main"]');
  }

  const egressAllow = async (uid: string) =>
    (await api.get(`/agent/environments/${uid}`)).body.config.egress_allow as unknown[];

  /** A run in `environmentId` whose sandbox was refused `evil.example.com` three times. */
  async function blockedRun(environmentId: string): Promise<string> {
    const created = await api.post('/agent/runs', {
      prompt: 'reach out',
      config: { environment_id: environmentId },
    });
    expect(created.status).toBe(200);
    const runId = created.body.run_id as string;
    // The sandbox's proxy writes this event; here it is made directly, as a finished run left it.
    await app.dataSource.query(
      `INSERT INTO run_events (event_uuid, run_id, execution_id, event_type, occurred_at, payload)
       VALUES (?, ?, 1, 'egress_denied', ?, ?)`,
      [
        newUuid(),
        runId,
        new Date(),
        JSON.stringify({
          host: 'evil.example.com',
          port: 443,
          method: null,
          reason: 'not in egress_allow: add "evil.example.com"',
          count: 3,
        }),
      ],
    );
    return runId;
  }

  it("an admin allows a blocked host in the run's environment with one click; a member cannot", async () => {
    const env = await api.post('/agent/environments', {
      name: 'locked-down',
      network: 'allowlist',
      egress_allow: ['api.github.com'],
    });
    expect(env.status).toBe(201);
    const runId = await blockedRun(env.body.uid as string);
    const page = chromium.page;

    await step(page, 'blocked-hosts-member', async () => {
      const member = await api.post('/api-keys', { name: 'member', role: 'member' });
      await signIn(page, member.body.key as string);
      await page.goto(`${origin()}/console/runs/${runId}`);
      await waitForText(page, 'Blocked hosts');
      await waitForText(page, "Admins can allow a host in the run's environment.");
      expect(await page.$('button[aria-label="Allow evil.example.com in this environment"]')).toBe(
        null,
      );
      await clickText(page, 'Sign out');
      await waitForText(page, 'Signed out.');
    });

    await step(page, 'blocked-hosts-admin', async () => {
      await signIn(page);
      await page.goto(`${origin()}/console/runs/${runId}`);
      await waitForText(page, 'Blocked hosts');
      const row = (await page.$eval('table[aria-label="Blocked hosts"] tbody tr', (tr) =>
        (tr as unknown as { innerText: string }).innerText.replace(/\s+/g, ' '),
      )) as string;
      expect(row).toContain('evil.example.com');
      expect(row).toContain('443');
      expect(row).toContain('not in egress_allow');
      expect(row).toMatch(/\b3\b/);
      await page.click('button[aria-label="Allow evil.example.com in this environment"]');
      await waitForText(page, 'Allowed: evil.example.com');
    });
    expect(await egressAllow(env.body.uid as string)).toEqual([
      'api.github.com',
      'evil.example.com',
    ]);
    const events = (await app.dataSource.query(
      `SELECT actor_role FROM audit_events WHERE action = 'environment.egress_allow' AND target_id = ?`,
      [env.body.uid],
    )) as { actor_role: string }[];
    expect(events).toEqual([{ actor_role: 'admin' }]);
  });

  it('edits network and allowed hosts in the environment form, showing a bad rule on its line', async () => {
    const page = chromium.page;
    await step(page, 'environment-egress-form', async () => {
      await signIn(page);
      await page.goto(`${origin()}/console/environments`);
      // The admin forbids open egress from the same page; the form's save then names network.
      await clickText(page, 'Forbid open egress');
      await waitForText(page, 'An admin forbade open egress');
      expect((await api.get('/network-policy')).body).toEqual({ egress_open_allowed: false });
      await clickText(page, 'New environment');
      await fill(page, 'Name', 'form-open');
      await fill(page, 'Network', 'egress');
      await clickText(page, 'Create environment');
      await waitForText(page, 'network: an admin of the team forbade open egress');
      await clickText(page, 'Allow open egress');
      await waitForText(page, 'Environments may use open egress');
      await clickText(page, 'Close');
      await clickText(page, 'New environment');
      await fill(page, 'Name', 'form-allowlist');
      await fill(page, 'Network', 'allowlist');
      await fill(
        page,
        'Allowed hosts (one rule a line)',
        'api.github.com\nbad_host!\napi.example.com GET HEAD',
      );
      await clickText(page, 'Create environment');
      await page.waitForSelector('[data-testid="egress-allow-error"]');
      const shown = (await page.$eval(
        '[data-testid="egress-allow-error"]',
        (el) => (el as unknown as { innerText: string }).innerText,
      )) as string;
      expect(shown).toMatch(/^Line 2: .*not a host name/);
      await fill(
        page,
        'Allowed hosts (one rule a line)',
        'api.github.com\n*.npmjs.org\napi.example.com GET HEAD',
      );
      await clickText(page, 'Create environment');
      // The list shows it once it is saved (the name field's value is no page text).
      await waitForText(page, 'form-allowlist');
    });
    const list = (await api.get('/agent/environments')).body.environments as {
      config: Record<string, unknown>;
    }[];
    expect(list.find((e) => e.config.name === 'form-allowlist')?.config).toMatchObject({
      network: 'allowlist',
      egress_allow: [
        'api.github.com',
        '*.npmjs.org',
        { host: 'api.example.com', methods: ['GET', 'HEAD'] },
      ],
    });
  });
});
