import type { Page } from 'puppeteer-core';
import {
  buildConsole,
  clickText,
  fill,
  freePort,
  horizontalOverflow,
  step,
  useChromium,
  waitForRunState,
  waitForText,
} from './support/console-browser';
import { ApiKeysService } from '../src/modules/teams/api-keys.service';
import { TeamsService } from '../src/modules/teams/teams.service';
import { apiClient } from './support/api-client';
import { useTestApp } from './support/use-test-app';
import { waitFor } from './support/wait';
import {
  createFactory,
  createWebhook,
  deliver,
  standardWebhooksHeaders,
} from './support/webhook-helpers';

type RunBody = {
  run_id: string;
  state: string;
  prompt: string;
  agent_config?: Record<string, unknown>;
  metadata?: Record<string, string>;
};

/**
 * The console's run list, run page, environments form and automations in Chromium against a real
 * Ambient (api + ingress + worker, fake model server), at desktop size and on a 390 px phone.
 */
describe('console runs, environments and automations (Chromium)', () => {
  // Declared first, so its afterAll closes the browser before the app closes (hooks run in order).
  const chromium = useChromium();
  let settings: Record<string, unknown>;

  beforeAll(async () => {
    const port = await freePort();
    settings = {
      'server.port': port,
      'server.publicUrl': `http://127.0.0.1:${port}`,
      'server.consoleDir': buildConsole(),
      // The environments form names an image: the operator allows node's.
      'sandbox.docker.images': 'node:',
    };
  }, 120_000);
  const { api, app, model } = useTestApp(
    'console-runs',
    ['api', 'ingress', 'worker'],
    () => settings,
  );

  const origin = () => new URL(app.baseUrl).origin;

  async function signIn(page: Page) {
    await page.goto(`${origin()}/console/`);
    await fill(page, 'API key', app.apiKey);
    await clickText(page, 'Sign in');
    await page.waitForSelector('nav[aria-label="Main"]');
  }

  const finished = (runId: string) =>
    waitFor(
      async () => (await api.get(`/agent/runs/${runId}`)).body as RunBody,
      (run) => ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(run.state),
      { what: `run ${runId} to finish`, timeoutMs: 60_000 },
    );

  /** The visible text of the first element matching `selector`. */
  const text = (page: Page, selector: string) =>
    page.evaluate(
      `document.querySelector(${JSON.stringify(selector)}).innerText`,
    ) as Promise<string>;

  it('shows a failed run with its error code and duration first, step durations, copies its id and re-runs it', async () => {
    const environment = await api.post('/agent/environments', {
      name: 'broken-setup',
      setup_commands: ['echo preparing', 'echo boom >&2; exit 3'],
    });
    const created = await api.post('/agent/runs', {
      prompt: 'Never gets this far',
      title: 'Broken setup',
      config: { environment_id: environment.body.uid },
    });
    const runId = created.body.run_id as string;
    expect((await finished(runId)).state).toBe('FAILED');
    const timeline = (await api.get(`/agent/runs/${runId}/timeline`)).body.events as unknown[];

    const page = chromium.page;
    await step(page, 'failed-run', async () => {
      await page
        .browserContext()
        .overridePermissions(origin(), [
          'clipboard-read',
          'clipboard-write',
          'clipboard-sanitized-write',
        ]);
      // The clipboard answers only a focused page.
      await page.bringToFront();
      await signIn(page);
      await page.goto(`${origin()}/console/runs/${runId}`);
      await waitForRunState(page, 'FAILED');
      const error = await text(page, '[data-testid="run-error"]');
      expect(error).toContain('Environment setup failed');
      expect(error).toContain('environment_setup_failed');
      expect(error).toContain('exited with code 3');
      expect(await text(page, '[data-testid="run-duration"]')).toMatch(/^\d+ (ms|s)$|min/);
      // One waterfall row per timeline event, each but the last with how long it lasted.
      const rows = (await page.evaluate(
        `[...document.querySelectorAll('.waterfall li .step-duration')].map((d) => d.innerText)`,
      )) as string[];
      expect(rows).toHaveLength(timeline.length);
      for (const duration of rows.slice(0, -1)) expect(duration).toMatch(/^\d+ (ms|s)|min/);
      // The API's conversation repeats the timeline's events as system messages; the page does not.
      const conversation = (await api.get(`/agent/runs/${runId}/conversation`)).body;
      expect(JSON.stringify(conversation)).toContain('oz_run_failed');
      expect(await text(page, 'main')).toContain('oz_run_failed');
      expect(
        await page.evaluate(`document.querySelector('.conversation')?.innerText ?? ''`),
      ).not.toContain('oz_run');

      await clickText(page, 'Copy id');
      await waitForText(page, 'Copied');
      expect(await page.evaluate('navigator.clipboard.readText()')).toBe(runId);

      await clickText(page, 'Re-run');
      await page.waitForFunction(`!location.pathname.endsWith(${JSON.stringify(runId)})`);
      const rerunId = page.url().split('/runs/')[1];
      const rerun = (await api.get(`/agent/runs/${rerunId}`)).body as RunBody;
      expect(rerun.prompt).toBe('Never gets this far');
      expect(rerun.agent_config?.environment_id).toBe(environment.body.uid);
      expect(rerun.metadata?.rerun_of).toBe(runId);
      await waitForRunState(page, 'FAILED', 60_000);

      await page.setViewport({ width: 390, height: 844 });
      await page.goto(`${origin()}/console/runs/${runId}`);
      await waitForRunState(page, 'FAILED');
      expect(await horizontalOverflow(page)).toBe(0);
    });
  });

  it('lists runs with duration, model, trigger and relative times; on a phone the filters stay compact and rows become cards', async () => {
    model.script('console-runs-quick', [{ text: 'Done.' }]);
    const created = await api.post('/agent/runs', {
      prompt: 'Quick [script:console-runs-quick]',
      title: 'Listed run',
      config: { model_id: 'fake-model' },
    });
    const run = await finished(created.body.run_id);
    expect(run.state).toBe('SUCCEEDED');

    const page = chromium.page;
    await step(page, 'runs-list', async () => {
      await signIn(page);
      await page.goto(`${origin()}/console/runs`);
      await waitForText(page, 'Listed run');
      const row = `[...document.querySelectorAll('main tbody tr')].find((tr) => tr.innerText.includes('Listed run'))`;
      const cells = (await page.evaluate(
        `Object.fromEntries([...${row}.querySelectorAll('td')].map((td) => [td.className, td.innerText.trim()]))`,
      )) as Record<string, string>;
      expect(cells['col-state']).toBe('Succeeded');
      expect(cells['col-duration']).toMatch(/^\d+ (ms|s)$/);
      expect(cells['col-model']).toBe('fake-model');
      expect(cells['col-trigger']).toBe('API');
      expect(cells['col-created']).toMatch(/just now|ago/);
      // The exact time is in the title.
      const title = (await page.evaluate(
        `${row}.querySelector('.col-created time').title`,
      )) as string;
      const createdAt = (await api.get(`/agent/runs/${run.run_id}`)).body.created_at as string;
      expect(Math.abs(Date.parse(title) - Date.parse(createdAt))).toBeLessThan(1000);

      // The tab has the console's icon, and the header links the API docs.
      const icon = (await page.evaluate(
        `document.querySelector('link[rel="icon"]').href`,
      )) as string;
      const iconAnswer = await fetch(icon);
      expect(iconAnswer.status).toBe(200);
      expect(iconAnswer.headers.get('content-type')).toContain('image/svg+xml');
      const docs = (await page.evaluate(
        `document.querySelector('header a.docs-link').href`,
      )) as string;
      expect(docs).toBe(`${origin()}/api/docs`);
      expect((await fetch(docs)).status).toBe(200);

      await page.setViewport({ width: 390, height: 844 });
      await page.goto(`${origin()}/console/runs`);
      await waitForText(page, 'Listed run');
      // The advanced filters are folded: the bar takes well under half the screen.
      expect(await page.$('#filter-createdAfter')).toBeNull();
      const barHeight = (await page.evaluate(
        `document.querySelector('form.filters').getBoundingClientRect().height`,
      )) as number;
      expect(barHeight).toBeLessThan(844 / 2);
      await clickText(page, 'More filters');
      await page.waitForSelector('#filter-createdAfter');
      // Rows are cards: each cell labelled, no horizontal scrolling.
      expect(
        await page.evaluate(`getComputedStyle(document.querySelector('main tbody td')).display`),
      ).toBe('grid');
      expect(await horizontalOverflow(page)).toBe(0);

      await fill(page, 'Search', 'nothing-is-called-this');
      await clickText(page, 'Apply');
      await waitForText(page, 'No runs match these filters.');
    });
  });

  it('creates an environment with repositories, setup, image, network and resources on a phone; the API has them', async () => {
    const page = chromium.page;
    await step(page, 'environment-form', async () => {
      await page.setViewport({ width: 390, height: 844 });
      await signIn(page);
      await page.goto(`${origin()}/console/environments`);
      await waitForText(page, 'broken-setup');
      await clickText(page, 'New environment');
      await fill(page, 'Name', 'full-env');
      await fill(page, 'Repositories (owner/repo, one a line)', 'acme/api');
      await fill(page, 'Setup commands (one a line)', 'npm ci');
      await fill(page, 'Docker image', 'node:22');
      await fill(page, 'Network', 'egress');
      await fill(page, 'Memory (MB)', '512');
      await fill(page, 'CPUs', '1');
      await fill(page, 'Processes (PIDs)', '256');
      expect(await horizontalOverflow(page)).toBe(0);
      await clickText(page, 'Create environment');
      await waitForText(page, 'acme/api');
      const list = (await api.get('/agent/environments')).body.environments as {
        config: Record<string, unknown>;
      }[];
      expect(list.find((e) => e.config.name === 'full-env')?.config).toMatchObject({
        github_repos: [{ owner: 'acme', repo: 'api' }],
        setup_commands: ['npm ci'],
        docker_image: 'node:22',
        network: 'egress',
        resources: { memory_mb: 512, cpus: 1, pids: 256 },
      });
      expect(await horizontalOverflow(page)).toBe(0);
    });
  });

  it('shows an admin the environments another team offers, with what they run; accepting one adds it', async () => {
    const keys = app.ambient.app.get(ApiKeysService);
    const teams = app.ambient.app.get(TeamsService);
    const ours = (await keys.authenticate(app.apiKey))!.teamId;
    const sharers = await teams.createTeam('sharers');
    const sharer = await teams.createUser(sharers, { displayName: 'Sharer', role: 'admin' });
    const theirs = apiClient(app.baseUrl, (await keys.create(sharer, 'sharer')).key);
    const offered = await theirs.post('/agent/environments', {
      name: 'their-env',
      github_repos: [{ owner: 'sharers', repo: 'tools' }],
      setup_commands: ['make offered-deps'],
    });
    const uid = offered.body.uid as string;
    expect((await theirs.post(`/agent/environments/${uid}/grants`, { team_id: ours })).status).toBe(
      204,
    );
    const visible = async () =>
      ((await api.get('/agent/environments')).body.environments as { uid: string }[]).map(
        (e) => e.uid,
      );
    expect(await visible()).not.toContain(uid);

    const page = chromium.page;
    await step(page, 'environment-offers', async () => {
      await signIn(page);
      await page.goto(`${origin()}/console/environments`);
      await waitForText(page, 'Offered to this team');
      await waitForText(page, 'make offered-deps');
      await waitForText(page, 'sharers/tools');
      await clickText(page, 'Accept version 1');
      await waitFor(visible, (uids) => uids.includes(uid), { what: 'the accepted environment' });
      await page.waitForFunction(`!document.body.innerText.includes('Offered to this team')`);
      await waitForText(page, 'their-env');
    });
  });

  it('creates and edits an automation in the console; a delivery starts its run, whose trigger links back to the delivery', async () => {
    const factory = await createFactory(api, 'Automations factory');
    const hook = await createWebhook(api, factory, {
      name: 'deploys',
      auth_mode: 'signature',
      signature_scheme: 'standard_webhooks',
    });
    model.script('console-automation', [{ text: 'Handled.' }]);
    const page = chromium.page;
    await step(page, 'automation', async () => {
      await signIn(page);
      await page.goto(`${origin()}/console/webhooks`);
      await clickText(page, 'Automations factory');
      await clickText(page, 'New automation');
      await fill(page, 'Automation name', 'triage');
      await clickText(page, 'deploys', 'label');
      await fill(page, 'Payload filter (JSON, optional)', '{"event": ["deploy"]}');
      await fill(page, 'Model (optional)', 'fake-model');
      await fill(page, 'Prompt', 'Handle it [script:console-automation]');
      await clickText(page, 'Create automation');
      await waitForText(page, 'Saved the automation triage');
      const automations = (await api.get(`/factory/${factory}/automations`)).body.automations as {
        name: string;
        enabled: boolean;
        triggers: unknown[];
      }[];
      expect(automations).toEqual([
        expect.objectContaining({
          name: 'triage',
          enabled: true,
          triggers: [
            {
              provider: 'webhook',
              event: 'received',
              webhook_ids: [hook.uid],
              payload: { event: ['deploy'] },
            },
          ],
        }),
      ]);

      const body = JSON.stringify({ event: 'deploy' });
      const sent = await deliver(`${app.ingressUrl}/webhooks/w/${hook.uid}`, body, {
        'content-type': 'application/json',
        ...standardWebhooksHeaders(hook.secret as string, 'msg_automation_1', body),
      });
      expect(sent.status).toBeLessThan(300);
      const started = await waitFor(
        async () => (await api.get('/agent/runs?source=CUSTOM_WEBHOOK')).body.runs as RunBody[],
        (runs) => runs.length === 1,
        { what: 'the automation run' },
      );
      await page.goto(`${origin()}/console/runs/${started[0].run_id}`);
      await waitForText(page, 'event-payload.json');
      await clickText(page, 'Webhook (triage)');
      await page.waitForFunction(`location.search.includes('delivery=msg_automation_1')`);
      await waitForText(page, 'Delivery msg_automation_1');

      // Edit: disabled from now on.
      await page.click('button[aria-label="Edit automation triage"]');
      await clickText(page, 'Enabled', 'label');
      await clickText(page, 'Save automation');
      await waitForText(page, 'Saved the automation triage');
      await waitFor(
        async () => (await api.get(`/factory/${factory}/automations`)).body.automations,
        (list: { enabled: boolean }[]) => list.length === 1 && !list[0].enabled,
        { what: 'the automation to be disabled' },
      );
    });
  });
});
