import type { Browser, Page } from 'puppeteer-core';
import { RunStreamHub } from '../src/modules/runs/live/run-stream-hub.service';
import { ApiKeysService } from '../src/modules/teams/api-keys.service';
import { TeamsService } from '../src/modules/teams/teams.service';
import { apiClient } from './support/api-client';
import {
  buildConsole,
  freePort,
  step,
  useChromium,
  waitForRunState,
} from './support/console-browser';
import { useTestApp } from './support/use-test-app';
import { waitFor } from './support/wait';

/** More run pages than Chromium's six HTTP/1.1 connections per host. */
const PAGES = 12;
/** Thirteen pages of a real browser on a shared, loaded machine take a while. */
const SLOW_TEST_MS = 300_000;

/**
 * The console's live updates in Chromium: every tab and page of a browser shares one stream, so
 * any number of open run pages leaves connections for the next page to load. No worker role:
 * runs stay QUEUED until the test cancels them, a state change each page must show live.
 */
describe('console live updates share one connection (Chromium)', () => {
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
  const { api, app } = useTestApp('console-live', ['api'], () => settings);

  const origin = () => new URL(app.baseUrl).origin;
  const browser = (): Browser => chromium.page.browser();
  const hub = () => app.ambient.app.get(RunStreamHub);

  /** A tab signed in with `key` (the console keeps it in the tab's sessionStorage). */
  async function signedInTab(key = app.apiKey, page?: Page): Promise<Page> {
    const tab = page ?? (await browser().newPage());
    await tab.evaluateOnNewDocument(
      `sessionStorage.setItem('ambient.apiKey', ${JSON.stringify(key)})`,
    );
    return tab;
  }

  async function queuedRuns(count: number, client = api): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const created = await client.post('/agent/runs', { prompt: `Wait ${i}`, title: `live ${i}` });
      expect(created.status).toBe(200);
      ids.push(created.body.run_id as string);
    }
    return ids;
  }

  /** Opens the run's page and waits until it shows the run and says it is live. */
  async function openLive(page: Page, runId: string): Promise<void> {
    await page.goto(`${origin()}/console/runs/${runId}`);
    await waitForRunState(page, 'QUEUED');
    await page.waitForFunction(
      `document.querySelector('.live[role="status"]')?.innerText === 'Live'`,
    );
  }

  async function cancel(runId: string, client = api): Promise<void> {
    expect((await client.post(`/agent/runs/${runId}/cancel`)).status).toBe(200);
  }

  /** The live connections the server holds, once they settle at `expected`. */
  const connectionsSettleAt = (expected: number) =>
    waitFor(
      async () => hub().openStreams,
      (open) => open === expected,
      { what: `${expected} open live connection(s)` },
    );

  it(
    `keeps loading pages with ${PAGES} run pages open in separate tabs; the next one is live`,
    async () => {
      const runs = await queuedRuns(PAGES + 1);
      const tabs: Page[] = [];
      await step(chromium.page, 'tabs', async () => {
        for (const runId of runs.slice(0, PAGES)) {
          const tab = await signedInTab();
          await openLive(tab, runId);
          tabs.push(tab);
        }
        const last = await signedInTab();
        tabs.push(last);
        await openLive(last, runs[PAGES]);
        await connectionsSettleAt(1);

        // A state change reaches the page opened after the twelve, and the first one, live.
        await cancel(runs[PAGES]);
        await waitForRunState(last, 'CANCELLED');
        await cancel(runs[0]);
        await waitForRunState(tabs[0], 'CANCELLED');
      });
      for (const tab of tabs) await tab.close();
      await connectionsSettleAt(0);
    },
    SLOW_TEST_MS,
  );

  it(
    `keeps loading pages after ${PAGES} run pages visited in one tab; the next one is live`,
    async () => {
      const runs = await queuedRuns(PAGES + 1);
      const page = await signedInTab(app.apiKey, chromium.page);
      await step(page, 'one-tab', async () => {
        for (const [index, runId] of runs.slice(0, PAGES).entries()) {
          if (index % 2 === 0) {
            await openLive(page, runId);
            continue;
          }
          // Half of the visits navigate inside the console (a link click), half load the page.
          await page.evaluate(
            `history.pushState(null, '', '/console/runs/${runId}'); dispatchEvent(new PopStateEvent('popstate'))`,
          );
          await page.waitForFunction(
            `document.body.innerText.includes(${JSON.stringify(runId)}) && document.querySelector('.live[role="status"]')?.innerText === 'Live'`,
          );
        }
        await openLive(page, runs[PAGES]);
        await connectionsSettleAt(1);
        await cancel(runs[PAGES]);
        await waitForRunState(page, 'CANCELLED');
      });
    },
    SLOW_TEST_MS,
  );

  it(
    'without SharedWorker, shares one connection through an elected tab; the next tab takes over when it closes',
    async () => {
      const count = 8; // more than six: separate connections would stall the seventh tab
      const runs = await queuedRuns(count);
      const tabs: Page[] = [];
      await step(chromium.page, 'elected', async () => {
        for (const runId of runs) {
          const tab = await signedInTab();
          // As in a browser without SharedWorker.
          await tab.evaluateOnNewDocument(`delete window.SharedWorker`);
          await openLive(tab, runId);
          expect(await tab.evaluate('typeof SharedWorker')).toBe('undefined');
          tabs.push(tab);
        }
        await connectionsSettleAt(1);
        // The first tab leads (it took the lock first); without it, the next one streams.
        await tabs[0].close();
        await waitFor(
          async () => hub().followedRuns,
          (followed) => followed === count - 1,
          { what: "the new leader's stream of the other tabs' runs" },
        );
        await connectionsSettleAt(1);
        await cancel(runs[count - 1]);
        await waitForRunState(tabs[count - 1], 'CANCELLED');
      });
      for (const tab of tabs.slice(1)) await tab.close();
      await connectionsSettleAt(0);
    },
    SLOW_TEST_MS,
  );

  it(
    "never hands another team's run to a tab of this team, though the browser streams it",
    async () => {
      const keys = app.ambient.app.get(ApiKeysService);
      const teams = app.ambient.app.get(TeamsService);
      const others = await teams.createTeam('live-others');
      const other = await teams.createUser(others, { displayName: 'Other', role: 'admin' });
      const otherKey = (await keys.create(other, 'other')).key;
      const [theirRun] = await queuedRuns(1, apiClient(app.baseUrl, otherKey));
      const [ourRun] = await queuedRuns(1);

      // Their tab watches their run through the browser's shared stream.
      const theirTab = await signedInTab(otherKey);
      await openLive(theirTab, theirRun);
      // Our tab asks for the same run: the API says it does not exist, and so must the stream.
      const ourTab = await signedInTab(app.apiKey, chromium.page);
      await step(ourTab, 'other-team', async () => {
        await ourTab.goto(`${origin()}/console/runs/${theirRun}`);
        // Our tab is behind theirs, so hidden: the wait checks on DOM changes (see waitForRunState).
        await ourTab.waitForFunction(`document.body.innerText.includes('404')`, {
          polling: 'mutation',
        });
        await cancel(theirRun, apiClient(app.baseUrl, otherKey));
        await waitForRunState(theirTab, 'CANCELLED');
        // A run event handed to our page would show the run; it still shows only the 404.
        expect(await ourTab.$('[data-testid="run-state"]')).toBeNull();
        // Our own run's change arrives on the same tab afterwards (SPA navigation, same stream).
        await ourTab.evaluate(
          `history.pushState(null, '', '/console/runs/${ourRun}'); dispatchEvent(new PopStateEvent('popstate'))`,
        );
        await waitForRunState(ourTab, 'QUEUED');
        await cancel(ourRun);
        await waitForRunState(ourTab, 'CANCELLED');
      });
      await theirTab.close();
    },
    SLOW_TEST_MS,
  );
});
