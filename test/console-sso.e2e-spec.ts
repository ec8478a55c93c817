import type { Page } from 'puppeteer-core';
import {
  buildConsole,
  clickText,
  fill,
  freePort,
  step,
  useChromium,
  waitForText,
} from './support/console-browser';
import { startOidcProvider, TestOidcProvider } from './support/oidc-provider';
import { useTestApp } from './support/use-test-app';

const CLIENT_ID = 'ambient-console';

/**
 * The console's "Sign in with SSO" in Chromium against a real OpenID provider (oidc-provider on
 * loopback, a public client: PKCE alone): the provider's login form, back in the console signed
 * in with the mapped team and role (a viewer's run is refused with 403, a member's starts), and
 * sign-out ends the session on the server (its old cookie is refused).
 */
describe('console single sign-on (Chromium)', () => {
  // Declared first, so its afterAll closes the browser before the app closes (hooks run in order).
  const chromium = useChromium();
  let provider: TestOidcProvider;
  let settings: Record<string, unknown>;

  beforeAll(async () => {
    const port = await freePort();
    provider = await startOidcProvider({
      clientId: CLIENT_ID,
      redirectUri: `http://127.0.0.1:${port}/api/v1/auth/oidc/callback`,
      accounts: {
        mia: { email: 'mia@example.test', name: 'Mia Member', groups: ['ambient-members'] },
        vic: { email: 'vic@example.test', name: 'Vic Viewer', groups: ['ambient-viewers'] },
      },
    });
    settings = {
      'server.port': port,
      'server.consoleDir': buildConsole(),
      'signIn.oidcIssuer': provider.issuer,
      'signIn.oidcClientId': CLIENT_ID,
      'signIn.oidcScopes': 'openid email profile groups',
      'signIn.oidcRoleMapping': 'ambient-members=default:member,ambient-viewers=default:viewer',
    };
  }, 120_000);
  afterAll(() => provider?.close());
  const { app } = useTestApp('console-sso', ['api'], () => settings, { model: false });
  const origin = () => new URL(app.baseUrl).origin;

  /** From the console's sign-in page through the provider's login form, back signed in. */
  async function signInWithSso(page: Page, login: string): Promise<void> {
    // One browser for the file: no session of an earlier test (here or at the provider) is kept.
    await (await page.createCDPSession()).send('Network.clearBrowserCookies');
    await page.goto(`${origin()}/console/`);
    await clickText(page, 'Sign in with SSO');
    await page.waitForSelector('#login');
    expect(page.url().startsWith(provider.issuer)).toBe(true);
    await fill(page, 'Login', login);
    await clickText(page, 'Sign in', 'button');
    await page.waitForSelector('[data-testid="signed-in-as"]');
    expect(page.url()).toBe(`${origin()}/console/`);
  }

  async function startRun(page: Page, prompt: string): Promise<void> {
    await clickText(page, 'New run');
    await fill(page, 'Prompt', prompt);
    await fill(page, 'Model', 'fake-model');
    await clickText(page, 'Start run');
  }

  it('signs a member in with SSO, shows who and which team, starts a run; sign-out ends the session', async () => {
    const { page } = chromium;
    await step(page, 'sso-member', async () => {
      await signInWithSso(page, 'mia');
      const who = await page.$eval('[data-testid="signed-in-as"]', (el) => el.textContent);
      expect(who).toBe('Mia Member · default (member)');
      const session = (await page.cookies()).find((c) => c.name === 'ambient_session');
      expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax' });

      await startRun(page, 'Started from an SSO session');
      await page.waitForSelector('[data-testid="run-state"]');
      // The browser's shared live stream authenticates with the session cookie.
      await page.waitForFunction(
        `document.querySelector('.live[role="status"]')?.innerText === 'Live'`,
      );
      const runId = page.url().split('/runs/')[1];
      const [run] = (await app.dataSource.query(
        `SELECT u.display_name, u.oidc_subject FROM runs r JOIN users u ON u.id = r.creator_id WHERE r.id = ?`,
        [runId],
      )) as { display_name: string; oidc_subject: string }[];
      expect(run).toEqual({ display_name: 'Mia Member', oidc_subject: 'mia' });

      await clickText(page, 'Sign out');
      await waitForText(page, 'Signed out.');
      await page.waitForFunction(
        `[...document.querySelectorAll('a')].some(a => a.textContent === 'Sign in with SSO')`,
      );
      expect((await page.cookies()).some((c) => c.name === 'ambient_session')).toBe(false);
      const old = await fetch(`${origin()}/api/v1/me`, {
        headers: { cookie: `ambient_session=${session!.value}` },
      });
      expect(old.status).toBe(401);
      // Reloading the console does not sign the browser back in.
      await page.reload();
      await page.waitForSelector('#api-key');
    });
  });

  it('signs a viewer in as a viewer: the run form says a viewer may not start runs, the server refuses, and the viewer stays signed in', async () => {
    const { page } = chromium;
    await step(page, 'sso-viewer', async () => {
      await signInWithSso(page, 'vic');
      await waitForText(page, 'Vic Viewer · default (viewer)');
      const before = (await app.dataSource.query(`SELECT COUNT(*) AS n FROM runs`))[0].n;
      await clickText(page, 'New run');
      // Said before anything is typed, and the form cannot be sent.
      await waitForText(page, 'a viewer may not start runs');
      expect(await page.$eval('#run-prompt', (el) => el.matches(':disabled'))).toBe(true);
      // The server decides all the same: the session's own request is refused with 403.
      const refused = (await page.evaluate(`(async () => {
        const csrf = decodeURIComponent(/ambient_csrf=([^;]+)/.exec(document.cookie)[1]);
        const res = await fetch('/api/v1/agent/runs', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-csrf-token': csrf },
          body: JSON.stringify({ prompt: 'A viewer may not' }),
        });
        return { status: res.status, detail: (await res.json()).detail };
      })()`)) as { status: number; detail: string };
      expect(refused.status).toBe(403);
      expect(refused.detail).toContain('role "viewer" lacks permission "runs.create"');
      expect((await app.dataSource.query(`SELECT COUNT(*) AS n FROM runs`))[0].n).toBe(before);
      // A 403 the console itself meets (an admin's page) is shown, and signs nobody out.
      await clickText(page, 'API keys');
      await waitForText(page, 'Only an admin can see and manage');
      expect(await page.$('nav[aria-label="Main"]')).not.toBeNull();
      await waitForText(page, 'Vic Viewer · default (viewer)');
    });
  });
});
