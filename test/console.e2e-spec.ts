import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
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
  horizontalOverflow,
  launchChromium,
  openSection,
  step,
  waitForRunState,
  waitForText,
} from './support/console-browser';
import { createTestEnvironment, startTestApp, TestApp, TestEnvironment } from './support/test-app';
import { waitFor } from './support/wait';
import { createFactory, deliver, standardWebhooksHeaders } from './support/webhook-helpers';

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
  /** Where Chromium saves downloads (made by the test that downloads). */
  let downloads: string | undefined;

  beforeAll(async () => {
    const consoleDir = buildConsole();
    model = await startFakeModelServer();
    env = createTestEnvironment('console', model.url);
    const port = await freePort();
    app = await startTestApp(env, ['api', 'ingress', 'worker'], {
      'server.port': port,
      'server.publicUrl': `http://127.0.0.1:${port}`,
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
    if (downloads) rmSync(downloads, { recursive: true, force: true });
    await app?.close();
    await env?.destroy();
    await model?.close();
  });

  /** What the browser reported refusing under the Content-Security-Policy. */
  let cspViolations: string[];

  beforeEach(async () => {
    page = await browser.newPage();
    cspViolations = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
    });
  });
  afterEach(async () => {
    await page?.close();
    expect(cspViolations).toEqual([]);
  });

  async function signIn(key = app.apiKey) {
    await page.goto(`${origin}/console/`);
    await fill(page, 'API key', key);
    await clickText(page, 'Sign in');
    await page.waitForSelector('nav[aria-label="Main"]');
    // Who is signed in appears beside "Sign out" once it is known, moving the button: a click
    // aimed before that lands where the button was (a CI run's sign-out was lost so).
    await page.waitForSelector('[data-testid="signed-in-as"]');
  }

  /** The texts of the messages (errors, notices) the page shows. */
  const messages = () =>
    page.evaluate(
      `[...document.querySelectorAll('main [role="alert"], main [role="status"]')].map((m) => m.textContent)`,
    ) as Promise<string[]>;

  it('signs in with a key, refuses a bad one with one clear message, signs out', async () => {
    await step(page, 'sign-in', async () => {
      await page.goto(`${origin}/console/`);
      // The console draws its pages in script, which can finish after the document's load event
      // (a first visit on a loaded machine showed a blank page there).
      await page.waitForSelector('#api-key-source');
      // Before any attempt, the page says where keys come from.
      const source = (await page.$eval('#api-key-source', (el) => el.textContent)) as string;
      expect(source).toContain('npm run cli -- api-keys create');
      expect(await page.$eval('#api-key-source a', (a) => a.getAttribute('href'))).toBe(
        '/console/api-keys',
      );
      await fill(page, 'API key', 'amb_not_a_key');
      await clickText(page, 'Sign in');
      await waitForText(page, 'This API key was not accepted');
      // One message, in words: not a second one in HTTP terms from the API client.
      expect(await messages()).toEqual([expect.stringContaining('This API key was not accepted')]);
      expect((await messages())[0]).not.toMatch(/401|Unauthorized/);
      expect(await page.evaluate(`sessionStorage.getItem('ambient.apiKey')`)).toBeNull();
      await signIn();
      await waitForText(page, 'Runs');
      // A key refused later (revoked, say) sends the console back to sign-in, saying why.
      await page.evaluate(`sessionStorage.setItem('ambient.apiKey', 'amb_revoked_key_0000000000')`);
      await clickText(page, 'Models');
      await waitForText(page, 'The API key is no longer accepted');
      expect(await messages()).toEqual([
        expect.stringContaining('The API key is no longer accepted'),
      ]);
      await page.waitForSelector('#api-key');
      await signIn();
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
      // The form sent an Idempotency-Key: its answer (this run) is stored under it.
      const keyed = (await app.dataSource.query(
        `SELECT idem_key FROM idempotency_keys WHERE response_body LIKE ?`,
        [`%${runId}%`],
      )) as { idem_key: string }[];
      expect(keyed).toEqual([{ idem_key: expect.stringMatching(/^[0-9a-f-]{36}$/) }]);
      // A marker on window survives only if the page is never reloaded.
      await page.evaluate('window.notReloaded = true');
      // With the run stream the page says Live; a server without it is polled every 2 s.
      const paths = (await api.get('/openapi.json')).body.paths as Record<string, unknown>;
      const streamed = '/agent/runs/{runId}/stream' in paths;
      await waitForText(page, streamed ? 'Live' : 'Updating every 2 s');
      await waitForRunState(page, 'SUCCEEDED');
      expect(await page.evaluate('window.notReloaded')).toBe(true);
      expect((await api.get(`/agent/runs/${runId}`)).body.state).toBe('SUCCEEDED');
      await waitForText(page, 'All done from the console run.');
      await waitForText(page, 'console-tool-output');
      await waitForText(page, 'oz_run_done');
      // The conversation is re-read 150 ms after its last message or state change (debounced),
      // so it may come after the timeline: waited for, not read at once.
      await waitForText(page, 'tool call');
      await waitForText(page, 'run_command');

      // The transcript downloads through the API (with the key) into a file.
      downloads = mkdtempSync(join(tmpdir(), 'ambient-console-downloads-'));
      const cdp = await page.createCDPSession();
      await cdp.send('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: downloads });
      await clickText(page, 'Download transcript');
      const file = join(downloads, `transcript-${runId}.jsonl`);
      await waitFor(
        async () => existsSync(file),
        (done) => done,
        { what: 'the transcript download' },
      );
      expect(readFileSync(file, 'utf8')).toContain('console-tool-output');
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
      await waitForRunState(page, 'INPROGRESS');
      // Escape closes the dialog and cancels nothing.
      await clickText(page, 'Cancel run');
      await page.waitForSelector('dialog[open]');
      await page.keyboard.press('Escape');
      await page.waitForSelector('dialog[open]', { hidden: true });
      expect((await api.get(`/agent/runs/${runId}`)).body.state).toBe('INPROGRESS');
      // By keyboard: focus starts on "Keep"; Tab to the confirmation, Enter.
      await clickText(page, 'Cancel run');
      await page.waitForSelector('dialog[open]');
      expect(await page.evaluate('document.activeElement.textContent')).toBe('Keep');
      await page.keyboard.press('Tab');
      await page.keyboard.press('Enter');
      await waitForText(page, 'Cancel accepted');
      await waitForRunState(page, 'CANCELLED');
      expect((await api.get(`/agent/runs/${runId}`)).body.state).toBe('CANCELLED');
    });
  });

  it('lists runs with filters; every page fits a 390 px wide screen', async () => {
    model.script('console-list', [{ hang: true }]);
    const cancelled = await api.post('/agent/runs', {
      prompt: 'Stopped early [script:console-list]',
      title: 'Stopped early',
    });
    expect((await api.post(`/agent/runs/${cancelled.body.run_id}/cancel`)).status).toBe(200);
    model.script('console-quick', [{ text: 'Done.' }]);
    await api.post('/agent/runs', {
      prompt: 'Quick one [script:console-quick]',
      title: 'Quick one',
    });
    const rows = `[...document.querySelectorAll('main tbody tr')].map((tr) => tr.innerText).join('|')`;
    await step(page, 'runs-list-narrow', async () => {
      await signIn();
      await page.setViewport({ width: 390, height: 844 });
      await page.goto(`${origin}/console/runs`);
      await waitForText(page, 'Quick one');
      await waitForText(page, 'Stopped early');
      await fill(page, 'State', 'CANCELLED');
      await clickText(page, 'Apply');
      await page.waitForFunction(`!(${rows}).includes('Quick one')`);
      expect(await page.evaluate(rows)).toContain('Stopped early');
      await clickText(page, 'Clear');
      await fill(page, 'Search', 'Quick');
      await clickText(page, 'Apply');
      await page.waitForFunction(`!(${rows}).includes('Stopped early')`);
      expect(await page.evaluate(rows)).toContain('Quick one');
      expect(await horizontalOverflow(page)).toBeLessThanOrEqual(0);
      const runs = (await api.get('/agent/runs')).body.runs as { run_id: string }[];
      for (const [route, text] of [
        ['/runs/new', 'Start run'],
        [`/runs/${runs[0].run_id}`, 'Timeline'],
        ['/schedules', 'New schedule'],
        ['/webhooks', 'Factories'],
        ['/identities', 'New identity name'],
        ['/environments', 'New environment'],
        ['/models', 'Fake model'],
        ['/audit', 'Audit log'],
      ]) {
        await page.goto(`${origin}/console${route}`);
        await waitForText(page, text);
        expect({ route, overflow: await horizontalOverflow(page) }).toEqual({ route, overflow: 0 });
      }
    });
  });

  it('shows the audit log in words, its targets linked to their pages, and filters it by action', async () => {
    await api.post('/secrets', { name: 'CONSOLE_AUDITED', value: 'console-audit-0123456789' });
    await api.put('/secrets/CONSOLE_AUDITED', { value: 'console-audit-0123456789-2' });
    const schedule = await api.post('/agent/schedules', {
      name: 'audited-schedule',
      cron_schedule: '0 3 * * *',
      prompt: 'Audited',
      enabled: false,
    });
    expect(schedule.status).toBe(201);
    model.script('console-audited', [{ text: 'Done.' }]);
    const run = await api.post('/agent/runs', {
      prompt: 'Audited run [script:console-audited]',
      title: 'Audited run',
    });
    const rows = `[...document.querySelectorAll('main tbody tr')].map((tr) => tr.innerText).join('|')`;
    /** The href of the target link of the event with `action` about `name`. */
    const targetHref = (action: string, name: string) =>
      page.evaluate(
        `[...document.querySelectorAll('main tbody tr')]
          .filter((tr) => tr.querySelector('[data-action="${action}"]'))
          .map((tr) => tr.querySelector('[data-testid="audit-target"] a'))
          .find((a) => a && a.textContent.includes(${JSON.stringify(name)}))
          ?.getAttribute('href')`,
      ) as Promise<string | undefined>;
    await step(page, 'audit-log', async () => {
      await signIn();
      await clickText(page, 'Audit');
      // Actions in words, the code beside them; details as key and value, not JSON.
      await waitForText(page, 'Secret changed');
      const shownRows = (await page.evaluate(rows)) as string;
      expect(shownRows).toContain('secret.update');
      const detailPairs = (await page.evaluate(
        `[...document.querySelectorAll('main dl.kv > div')].map((d) => d.querySelector('dt').textContent + '=' + d.querySelector('dd').textContent)`,
      )) as string[];
      expect(detailPairs).toContain('Value changed=yes');
      expect(shownRows).not.toContain('{"');
      // The key that acted, and the person it belongs to.
      expect(shownRows).toContain('api_key · admin · for Admin');
      // Targets link to their console pages.
      expect(await targetHref('schedule.create', 'audited-schedule')).toBe(
        `/console/schedules?schedule=${schedule.body.id}`,
      );
      const runLink = await targetHref('run.create', 'Audited run');
      expect(runLink).toBe(`/console/runs/${run.body.run_id}`);
      await page.click(`main a[href="${runLink}"]`);
      await page.waitForSelector('[data-testid="run-state"]');
      expect(page.url()).toBe(`${origin}${runLink}`);

      await page.goBack();
      await fill(page, 'Action', 'secret.create');
      await clickText(page, 'Apply');
      await page.waitForFunction(`!(${rows}).includes('secret.update')`);
      const shown = (await page.evaluate(rows)) as string;
      expect(shown).toContain('Secret created');
      expect(shown).toContain('Secret CONSOLE_AUDITED');
      expect(shown).not.toContain('console-audit-0123456789');
      await fill(page, 'Outcome', 'denied');
      await clickText(page, 'Apply');
      await waitForText(page, 'No audit events.');
    });
  });

  it('at 390 px shows every table as cards, and the sections behind a Menu button', async () => {
    await api.post('/agent/schedules', {
      name: 'narrow-nightly',
      cron_schedule: '30 2 * * *',
      prompt: 'Nightly',
      enabled: false,
    });
    await api.post('/agent/environments', { name: 'narrow-env', setup_commands: ['true'] });
    model.script('console-narrow', [{ text: 'Done.' }]);
    const created = await api.post('/agent/runs', { prompt: 'Narrow [script:console-narrow]' });
    await waitFor(
      () => api.runState(created.body.run_id as string),
      (state) => state === 'SUCCEEDED',
      { what: 'the run to succeed', timeoutMs: 60_000 },
    );
    /** Each table of the page: whether it shows as cards (rows as blocks, the header hidden). */
    const tables = `[...document.querySelectorAll('main table')].map((t) => ({
      table: t.getAttribute('aria-label'),
      cards: t.classList.contains('data-table')
        && getComputedStyle(t.querySelector('tbody tr')).display === 'flex'
        && getComputedStyle(t.querySelector('thead')).position === 'absolute',
    }))`;
    await step(page, 'narrow-cards-menu', async () => {
      await signIn();
      await page.setViewport({ width: 390, height: 844 });
      await page.goto(`${origin}/console/runs`);
      await page.waitForSelector('main table');
      // The header is the brand and a Menu button: no sections taking the screen.
      const headerHeight = await page.$eval('header', (h) => h.getBoundingClientRect().height);
      expect(headerHeight).toBeLessThan(70);
      expect(await page.$('nav[aria-label="Main"] a[href="/console/schedules"]')).not.toBeNull();
      await page.waitForSelector('nav[aria-label="Main"]', { hidden: true });
      await openSection(page, 'Schedules');
      await waitForText(page, 'narrow-nightly');
      expect(page.url()).toBe(`${origin}/console/schedules`);
      // The drawer closed on the way.
      await page.waitForSelector('nav[aria-label="Main"]', { hidden: true });
      expect(await page.$eval('button.menu-toggle', (b) => b.getAttribute('aria-expanded'))).toBe(
        'false',
      );
      for (const [route, text, table] of [
        ['/schedules', 'narrow-nightly', 'Schedules'],
        ['/models', 'Fake model', 'Models'],
        ['/usage', 'By creator', 'By model'],
        ['/audit', 'Run created', 'Audit events'],
        ['/environments', 'narrow-env', 'Environments'],
        ['/runs', 'Narrow', 'Runs'],
        ['/api-keys', 'Role', 'API keys'],
      ]) {
        await page.goto(`${origin}/console${route}`);
        await waitForText(page, text);
        await page.waitForSelector(`table[aria-label="${table}"]`);
        const shown = (await page.evaluate(tables)) as { table: string; cards: boolean }[];
        expect({ route, shown }).toEqual({
          route,
          shown: shown.map((t) => ({ table: t.table, cards: true })),
        });
        expect({ route, overflow: await horizontalOverflow(page) }).toEqual({ route, overflow: 0 });
      }
    });
  });

  it('shows a viewer, before anything is filled in, that they may not start runs or create schedules', async () => {
    const viewer = await api.post('/api-keys', { name: 'console viewer', role: 'viewer' });
    expect(viewer.status).toBe(201);
    const runsBefore = ((await api.get('/agent/runs?limit=100')).body.runs as unknown[]).length;
    await step(page, 'viewer-forms', async () => {
      await signIn(viewer.body.key as string);
      await page.goto(`${origin}/console/runs/new`);
      await waitForText(page, 'a viewer may not start runs');
      // The explanation is above the form, and every field of the form is disabled.
      const layout = (await page.evaluate(`({
        notice: document.querySelector('[data-testid="role-refusal"]').getBoundingClientRect().top,
        form: document.querySelector('form[aria-label="New run"]').getBoundingClientRect().top,
        disabled: [...document.querySelectorAll('form[aria-label="New run"] textarea, form[aria-label="New run"] select, form[aria-label="New run"] input, form[aria-label="New run"] button')]
          .map((el) => el.matches(':disabled')),
      })`)) as { notice: number; form: number; disabled: boolean[] };
      expect(layout.notice).toBeLessThan(layout.form);
      expect(layout.disabled.length).toBeGreaterThan(3);
      expect(layout.disabled.every(Boolean)).toBe(true);
      expect(await page.$eval('[data-testid="role-refusal"]', (el) => el.textContent)).toContain(
        'admin or member role',
      );
      await page.goto(`${origin}/console/schedules`);
      await waitForText(page, 'a viewer may not create or change schedules');
      const newSchedule = (await page.evaluate(
        `[...document.querySelectorAll('button')].find((b) => b.textContent === 'New schedule').disabled`,
      )) as boolean;
      expect(newSchedule).toBe(true);
    });
    expect(((await api.get('/agent/runs?limit=100')).body.runs as unknown[]).length).toBe(
      runsBefore,
    );
  });

  it('creates a webhook (secret shown once), logs a signed delivery as Accepted with its run, tests a filter, redelivers it', async () => {
    const factory = await createFactory(api, 'Console factory');
    model.script('console-hook', [{ text: 'Handled the delivery.' }]);
    await step(page, 'webhooks', async () => {
      await signIn();
      await page.goto(`${origin}/console/webhooks`);
      await clickText(page, 'Console factory');
      await page.click('details summary');
      await fill(page, 'Webhook name', 'deploys');
      await fill(page, 'Authentication', 'signature');
      await fill(page, 'Signature scheme', 'standard_webhooks');
      await clickText(page, 'Create webhook');
      await waitForText(page, 'The secret is shown only now');
      const shown = (await page.evaluate(
        `[...document.querySelectorAll('.shown-once code')].map((c) => c.textContent)`,
      )) as string[];
      const [url, secret] = shown;
      expect(secret).toMatch(/^whsec_/);
      const uid = url.split('/').pop() as string;
      // The definition holds the webhook too: keep its files, add an automation for it.
      const files = (await api.get(`/factory/${factory}/definition`)).body.files as {
        path: string;
        content: string;
      }[];
      const automation = {
        path: 'automations/triage/automation.md',
        content: `---\nmodel: fake-model\ntriggers:\n  - provider: webhook\n    event: received\n    filter:\n      webhook_ids: [${uid}]\n      payload:\n        event: [deploy]\n---\nHandle it [script:console-hook]\n`,
      };
      const definition = { files: [...files, automation] };
      expect((await api.put(`/factory/${factory}/definition`, definition)).status).toBe(200);

      const body = JSON.stringify({ event: 'deploy', service: 'api' });
      const sent = await deliver(`${app.ingressUrl}/webhooks/w/${uid}`, body, {
        'content-type': 'application/json',
        ...standardWebhooksHeaders(secret, 'msg_console_1', body),
      });
      expect(sent.status).toBeLessThan(300);
      // The log refreshes itself: the delivery appears Accepted, then with the run it started.
      await waitForText(page, 'msg_console_1');
      await waitForText(page, 'Accepted');
      const link = 'table[aria-label="Deliveries"] a[href*="/console/runs/"]';
      await page.waitForSelector(link, { timeout: 30_000 });
      const href = (await page.$eval(link, (a) => a.getAttribute('href'))) as string;
      const started = (await api.get(`/agent/runs/${href.split('/runs/')[1]}`)).body;
      expect(started.source).toBe('CUSTOM_WEBHOOK');
      expect(await page.$eval('table[aria-label="Deliveries"]', (t) => t.textContent)).toContain(
        'triage',
      );

      await clickText(page, 'Details');
      await waitForText(page, '"service": "api"');
      await fill(page, 'Automation', 'triage');
      await clickText(page, 'Run test filter');
      await waitForText(page, 'Would trigger');
      await fill(
        page,
        "Or a filter (JSON), instead of the automation's",
        `{"webhook_ids": ["${uid}"], "payload": {"event": ["other"]}}`,
      );
      await clickText(page, 'Run test filter');
      await waitForText(page, 'Would not trigger');

      // Redeliver: a new log entry, shown at once, whose evaluation starts the run again.
      await clickText(page, 'Redeliver');
      await waitForText(page, 'Redelivered as msg_console_1-redelivery-1');
      await waitForText(page, 'Delivery msg_console_1-redelivery-1');
      await waitForText(page, 'Redelivery of log entry');
      await page.waitForFunction(
        `document.querySelectorAll(${JSON.stringify(link)}).length === 2`,
        { timeout: 30_000 },
      );
      const log = (await api.get(`/factory/${factory}/webhooks/${uid}/deliveries`)).body
        .deliveries as {
        delivery_id: string;
        redelivery_of?: string;
        runs: { run_id: string }[];
      }[];
      expect(log[0]).toMatchObject({
        delivery_id: 'msg_console_1-redelivery-1',
        redelivery_of: expect.any(String),
        runs: [{ automation: 'triage', run_id: expect.any(String) }],
      });
      expect(log[0].runs[0].run_id).not.toBe(started.run_id);
    });
  });

  it('creates a schedule with a preview of its next 5 firings, then pauses it', async () => {
    await step(page, 'schedules', async () => {
      await signIn();
      await page.goto(`${origin}/console/schedules`);
      await clickText(page, 'New schedule');
      await fill(page, 'Name', 'nightly');
      await fill(page, 'Cron expression (UTC)', '30 2 * * *');
      await page.waitForFunction(
        `document.querySelectorAll('#schedule-preview li').length === 5 && [...document.querySelectorAll('#schedule-preview li')].every((li) => li.textContent.includes('02:30:00 UTC'))`,
      );
      await fill(page, 'Cron expression (UTC)', 'not a cron');
      await page.waitForSelector('#schedule-preview .error');
      await fill(page, 'Cron expression (UTC)', '30 2 * * *');
      await fill(page, 'Prompt', 'Nightly chores');
      await clickText(page, 'Create schedule');
      await page.waitForSelector('button[aria-label="Pause nightly"]');
      await page.click('button[aria-label="Pause nightly"]');
      await page.waitForSelector('button[aria-label="Resume nightly"]');
      await waitForText(page, 'Paused');
      const schedules = (await api.get('/agent/schedules')).body.schedules as {
        name: string;
        enabled: boolean;
      }[];
      expect(schedules.find((s) => s.name === 'nightly')?.enabled).toBe(false);
    });
  });

  it('creates an identity and a key shown once, revokes it; creates and edits an environment', async () => {
    await step(page, 'identities-environments', async () => {
      await signIn();
      await page.goto(`${origin}/console/identities`);
      await fill(page, 'New identity name', 'console-bot');
      await clickText(page, 'Create identity');
      await page.waitForSelector('button[aria-label="Keys of console-bot"]');
      await fill(page, 'New key name', 'deploy-key');
      await clickText(page, 'Create key');
      await waitForText(page, 'The key is shown only now');
      const key = (await page.evaluate(
        `document.querySelector('.shown-once code').textContent`,
      )) as string;
      const asBot = apiClient(app.baseUrl, key);
      expect((await asBot.get('/agent/models')).status).toBe(200);
      await clickText(page, 'Revoke deploy-key');
      await page.waitForSelector('dialog[open]');
      await page.click('dialog[open] button[value="yes"]');
      await waitForText(page, 'revoked');
      expect((await asBot.get('/agent/models')).status).toBe(401);

      await page.goto(`${origin}/console/environments`);
      await clickText(page, 'New environment');
      await fill(page, 'Name', 'console-env');
      await fill(page, 'Setup commands (one a line)', 'npm ci');
      await clickText(page, 'Create environment');
      await page.waitForSelector('button[aria-label="Edit console-env"]');
      await page.click('button[aria-label="Edit console-env"]');
      await fill(page, 'Description', 'Edited in the console');
      await clickText(page, 'Save environment');
      await page.waitForFunction(`!document.querySelector('[aria-label="Environment editor"]')`);
      const environments = (await api.get('/agent/environments')).body.environments as {
        config: { name: string; description?: string; setup_commands: string[] };
      }[];
      expect(environments.find((e) => e.config.name === 'console-env')?.config).toMatchObject({
        description: 'Edited in the console',
        setup_commands: ['npm ci'],
      });
    });
  });
});
