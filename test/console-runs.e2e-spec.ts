import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
import { RunContentRetentionSweeper } from '../src/modules/retention';
import { ApiKeysService } from '../src/modules/teams/api-keys.service';
import { TeamsService } from '../src/modules/teams/teams.service';
import { apiClient } from './support/api-client';
import { useTestApp } from './support/use-test-app';
import { waitFor } from './support/wait';
import { formatDuration, parseIsoDuration } from '../console/src/format';
import { formatUsd } from '../console/src/format/money';
import { runCostUsd } from '../console/src/api/usage';
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
  status_message?: { message: string; error_code?: string };
};

/**
 * The console's run list, run page, environments form and automations in Chromium against a real
 * Ambient (api + ingress + worker, fake model server), at desktop size and on a 390 px phone.
 */
describe('console runs, environments and automations (Chromium)', () => {
  // Declared first, so its afterAll closes the browser before the app closes (hooks run in order).
  const chromium = useChromium();
  let settings: Record<string, unknown>;
  let noRepos: string | undefined;

  beforeAll(async () => {
    noRepos = mkdtempSync(join(tmpdir(), 'ambient-no-repos-'));
    const port = await freePort();
    settings = {
      'server.port': port,
      'server.publicUrl': `http://127.0.0.1:${port}`,
      'server.consoleDir': buildConsole(),
      // The environments form names an image: the operator allows node's.
      'sandbox.docker.images': 'node:',
      // Clones come from an empty local directory: every repository is missing.
      'environments.gitUrlBase': noRepos,
      // One case ages a run past it and sweeps; the sweep's own timer never fires in a case.
      'runs.contentRetentionDays': 7,
    };
  }, 120_000);
  afterAll(() => {
    if (noRepos) rmSync(noRepos, { recursive: true, force: true });
  });
  const { api, app, env, model } = useTestApp(
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
    const timeline = (await api.get(`/agent/runs/${runId}/timeline`)).body.events as {
      event_type: string;
    }[];

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
      // The message keeps its lines: the command's output is on a line of its own.
      expect(
        await text(page, '[data-testid="run-error"] [data-testid="status-message"]'),
      ).toContain('exited with code 3\nboom');
      expect(
        await page.evaluate(
          `getComputedStyle(document.querySelector('[data-testid="status-message"]')).whiteSpace`,
        ),
      ).toBe('pre-wrap');
      expect(await text(page, '[data-testid="run-duration"]')).toMatch(/^\d+ (ms|s)$|min/);
      // Finished: the page no longer says it is live.
      expect(await page.$('.live[role="status"]')).toBeNull();
      // One waterfall row per step, each but the last with how long it lasted. A setup command is
      // one step from its start to its end, its output under it (not rows of their own).
      const folded = ['command_output', 'setup_command_succeeded', 'setup_command_failed'];
      const stepEvents = timeline.filter((e) => !folded.includes(e.event_type));
      const rows = (await page.evaluate(
        `[...document.querySelectorAll('.waterfall li .step-duration')].map((d) => d.innerText)`,
      )) as string[];
      expect(rows).toHaveLength(stepEvents.length);
      for (const duration of rows.slice(0, -1)) expect(duration).toMatch(/^\d+ (ms|s)|min/);
      // The failed setup step is in the timeline, red, with its command, exit code and output.
      const steps = (await page.evaluate(
        `[...document.querySelectorAll('.waterfall li')].map((li) => ({
          event: li.dataset.event, status: li.dataset.status, text: li.innerText,
          color: getComputedStyle(li.querySelector('.step-name')).color }))`,
      )) as { event: string; status: string; text: string; color: string }[];
      const setupSteps = steps.filter((s) => s.event === 'setup_command_started');
      expect(setupSteps.map((s) => s.status)).toEqual(['done', 'failed']);
      expect(setupSteps[1].text).toContain('echo boom >&2; exit 3');
      expect(setupSteps[1].text).toContain('exit code 3');
      expect(setupSteps[1].text).toContain('boom');
      expect(setupSteps[1].color).toBe('rgb(180, 35, 24)');
      expect(setupSteps[0].color).not.toBe('rgb(180, 35, 24)');
      // Nothing more will come: the page says what is true of its empty conversation.
      const main = await text(page, 'main');
      expect(main).toContain('This run recorded no conversation.');
      expect(main).not.toContain('Nothing recorded yet.');
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

  it('lists runs newest first with state, error, duration, model, trigger, relative times and cost; on a phone the filters stay compact and rows become cards', async () => {
    model.script('console-runs-quick', [{ text: 'Done.' }]);
    model.script('console-runs-again', [{ text: 'Done again.' }]);
    model.script('console-runs-newer', [{ text: 'Newer.' }]);
    model.script('console-runs-hang', [
      { toolCalls: [{ name: 'run_command', arguments: { command: 'sleep 600' } }] },
    ]);
    const created = await api.post('/agent/runs', {
      prompt: 'Quick [script:console-runs-quick]',
      title: 'Listed run',
      config: { model_id: 'fake-model' },
    });
    expect((await finished(created.body.run_id)).state).toBe('SUCCEEDED');
    const newer = await api.post('/agent/runs', {
      prompt: 'Later [script:console-runs-newer]',
      title: 'Newer run',
    });
    expect((await finished(newer.body.run_id)).state).toBe('SUCCEEDED');
    // A follow-up makes the older run the latest updated: it keeps its place in the list, and
    // its duration is its two executions, not the idle time between them.
    await api.post(`/agent/runs/${created.body.run_id}/followups`, {
      message: 'Again [script:console-runs-again]',
    });
    const run = await waitFor(
      async () => (await api.get(`/agent/runs/${created.body.run_id}`)).body,
      (r) => r.state === 'SUCCEEDED' && r.executions === 2,
      { what: 'the follow-up to finish', timeoutMs: 60_000 },
    );
    const runTimeMs = parseIsoDuration(run.run_time)!;
    expect(runTimeMs).toBeLessThan(Date.parse(run.finished_at) - Date.parse(run.started_at));
    const hanging = await api.post('/agent/runs', {
      prompt: 'Hang [script:console-runs-hang]',
      title: 'Cancelled run',
    });
    await waitFor(
      async () => (await api.get(`/agent/runs/${hanging.body.run_id}`)).body.state,
      (state) => state === 'INPROGRESS',
      { what: 'the run to start' },
    );
    expect((await api.post(`/agent/runs/${hanging.body.run_id}/cancel`)).status).toBe(200);
    expect((await finished(hanging.body.run_id)).state).toBe('CANCELLED');

    const page = chromium.page;
    await step(page, 'runs-list', async () => {
      await signIn(page);
      await page.goto(`${origin()}/console/runs`);
      await waitForText(page, 'Cancelled run');
      const rowOf = (title: string) =>
        `[...document.querySelectorAll('main tbody tr')].find((tr) => tr.innerText.includes(${JSON.stringify(title)}))`;
      const cellsOf = async (title: string) =>
        (await page.evaluate(
          `Object.fromEntries([...${rowOf(title)}.querySelectorAll('td')].map((td) => [td.className, td.innerText.trim()]))`,
        )) as Record<string, string>;
      const row = rowOf('Listed run');
      const cells = await cellsOf('Listed run');
      expect(cells['col-state']).toBe('Succeeded');
      expect(cells['col-error']).toBe('');
      expect(cells['col-duration']).toBe(formatDuration(runTimeMs));
      expect(
        await page.evaluate(`${row}.querySelector('[data-testid="run-duration"]').title`),
      ).toContain('2 executions');
      expect(cells['col-cost']).toBe(formatUsd(runCostUsd(run.request_usage)!));
      expect(cells['col-model']).toBe('fake-model');
      expect(cells['col-trigger']).toBe('API');
      expect(cells['col-created']).toMatch(/just now|ago/);
      // The exact time is in the title.
      const title = (await page.evaluate(
        `${row}.querySelector('.col-created time').title`,
      )) as string;
      const createdAt = (await api.get(`/agent/runs/${run.run_id}`)).body.created_at as string;
      expect(Math.abs(Date.parse(title) - Date.parse(createdAt))).toBeLessThan(1000);

      // Newest first by creation, whatever was updated last.
      const listed = (await page.evaluate(
        `[...document.querySelectorAll('main tbody tr .col-run a')].map((a) => a.innerText)`,
      )) as string[];
      expect(listed.indexOf('Newer run')).toBeLessThan(listed.indexOf('Listed run'));
      const byCreation = (
        (await api.get('/agent/runs?sort_by=created_at&sort_order=desc&limit=20')).body.runs as {
          title: string;
          run_id: string;
        }[]
      ).map((r) => r.title || r.run_id);
      expect(listed).toEqual(byCreation);
      // A failed run says why in a line; cancelled is grey, not failed's red; no badge wraps.
      expect((await cellsOf('Broken setup'))['col-error']).toBe(
        'Environment setup failed: setup command 2 (echo boom >&2; exit 3) exited with code 3',
      );
      expect((await cellsOf('Cancelled run'))['col-error']).toBe('');
      const badges = (await page.evaluate(`(() => {
        const look = (title) => {
          const row = [...document.querySelectorAll('main tbody tr')].find((tr) =>
            tr.innerText.includes(title),
          );
          const style = getComputedStyle(row.querySelector('.badge'));
          return { color: style.color, whiteSpace: style.whiteSpace };
        };
        return { failed: look('Broken setup'), cancelled: look('Cancelled run') };
      })()`)) as Record<string, { color: string; whiteSpace: string }>;
      expect(badges.cancelled.color).not.toBe(badges.failed.color);
      expect([badges.failed.whiteSpace, badges.cancelled.whiteSpace]).toEqual(['nowrap', 'nowrap']);

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

  it('shows a running command with a timer and its output as it comes; a run waiting for a concurrency slot says why', async () => {
    expect((await api.put('/limits', { max_concurrent_runs: 1 })).status).toBe(200);
    try {
      model.script('console-live-command', [
        {
          toolCalls: [
            {
              name: 'run_command',
              arguments: {
                command:
                  'echo first-line; while [ ! -f release ]; do sleep 0.1; done; echo second-line',
              },
            },
          ],
        },
        { text: 'Released.' },
      ]);
      model.script('console-waiting', [{ text: 'My turn.' }]);
      const building = await api.post('/agent/runs', {
        prompt: 'Build [script:console-live-command]',
        title: 'Long build',
      });
      const runId = building.body.run_id as string;
      await waitFor(
        async () => (await api.get(`/agent/runs/${runId}`)).body.state,
        (state) => state === 'INPROGRESS',
        { what: 'the build to start' },
      );
      const waiting = await api.post('/agent/runs', {
        prompt: 'Then me [script:console-waiting]',
        title: 'Waiting run',
      });
      const waitingId = waiting.body.run_id as string;
      await waitFor(
        async () => (await api.get(`/agent/runs/${waitingId}`)).body,
        (r) => r.state === 'QUEUED' && r.at_capacity === true,
        { what: 'the second run to wait for the slot' },
      );

      const page = chromium.page;
      await step(page, 'running-command', async () => {
        await signIn(page);
        await page.goto(`${origin()}/console/runs/${runId}`);
        await waitForRunState(page, 'INPROGRESS');
        await page.waitForFunction(
          `document.querySelector('.live[role="status"]')?.innerText === 'Live'`,
        );
        // The command is still running (it waits for a file): its output is already there.
        const running = '[data-status="running"][data-event="command_started"]';
        await page.waitForSelector(`${running} [data-testid="command-running"]`);
        await page.waitForFunction(
          `document.querySelector('${running} [data-testid="command-output"]')?.innerText.includes('first-line')`,
        );
        expect(await text(page, running)).toContain('echo first-line;');
        // Its timer moves on while it runs.
        const timer = `document.querySelector('${running} [data-testid="command-running"]').innerText`;
        const first = (await page.evaluate(timer)) as string;
        expect(first).toMatch(/^Running \d+ (ms|s)$/);
        await page.waitForFunction(`${timer} !== ${JSON.stringify(first)}`, { timeout: 10_000 });

        // The waiting run says why, in the list and on its page.
        await page.goto(`${origin()}/console/runs`);
        await waitForText(page, 'Waiting run');
        const waitingRow = `[...document.querySelectorAll('main tbody tr')].find((tr) => tr.innerText.includes('Waiting run'))`;
        expect(await page.evaluate(`${waitingRow}.querySelector('.col-state').innerText`)).toBe(
          'Queued\nwaiting for a free slot',
        );
        await page.goto(`${origin()}/console/runs/${waitingId}`);
        await waitForRunState(page, 'QUEUED');
        expect(await text(page, '[data-testid="at-capacity"]')).toContain(
          'concurrency limit (max_concurrent_runs)',
        );
        // Nothing recorded yet is a 404 too, not the content retention's: the page offers all.
        await waitForText(page, 'Nothing recorded yet.');
        expect(await page.$('[data-testid="content-deleted"]')).toBeNull();
        expect(await page.$('#followup')).not.toBeNull();

        // Released: the command ends, its last output arrives, the page stops saying Live.
        await page.goto(`${origin()}/console/runs/${runId}`);
        await page.waitForSelector(`${running} [data-testid="command-running"]`);
        writeFileSync(join(env.workspaceRoot, runId, 'release'), '');
        await waitForRunState(page, 'SUCCEEDED', 60_000);
        const done = '[data-status="done"][data-event="command_started"]';
        await page.waitForSelector(done);
        expect(await page.$('[data-testid="command-running"]')).toBeNull();
        await page.waitForFunction(`!document.querySelector('.live[role="status"]')`);
        expect(await page.evaluate(`document.querySelector('${done} pre').textContent`)).toBe(
          'first-line\nsecond-line\n',
        );
      });
      // The freed slot starts the waiting run.
      expect((await finished(waitingId)).state).toBe('SUCCEEDED');
    } finally {
      await api.put('/limits', { max_concurrent_runs: null });
    }
  });

  it('says a model provider refused the key, and shows a failed clone as a red step', async () => {
    model.script('console-refused', [{ status: 401, error: 'invalid api key' }]);
    const refused = await api.post('/agent/runs', {
      prompt: 'Try [script:console-refused]',
      title: 'Refused key',
    });
    const refusedRun = await finished(refused.body.run_id);
    expect(refusedRun.status_message).toMatchObject({
      error_code: 'external_authentication_required',
    });
    const environment = await api.post('/agent/environments', {
      name: 'missing-repo',
      github_repos: [{ owner: 'acme', repo: 'missing' }],
    });
    const cloning = await api.post('/agent/runs', {
      prompt: 'Never starts',
      title: 'Missing repository',
      config: { environment_id: environment.body.uid },
    });
    expect((await finished(cloning.body.run_id)).state).toBe('FAILED');

    const page = chromium.page;
    await step(page, 'refused-and-clone', async () => {
      await signIn(page);
      await page.goto(`${origin()}/console/runs/${refusedRun.run_id}`);
      await waitForRunState(page, 'FAILED');
      const error = await text(page, '[data-testid="run-error"]');
      expect(error).toContain('Model provider refused the credentials');
      expect(error).toContain('HTTP 401');
      expect(error).not.toContain('Sign-in');

      await page.goto(`${origin()}/console/runs/${cloning.body.run_id}`);
      await waitForRunState(page, 'FAILED');
      const clone = '[data-event="repository_clone_failed"][data-status="failed"]';
      await page.waitForSelector(clone);
      const cloneStep = await text(page, clone);
      expect(cloneStep).toContain('Repository clone failed');
      expect(cloneStep).toContain('acme/missing');
      expect(cloneStep).toContain('exit code 128');
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
      // Once the webhooks' table above the button has loaded (it moves the button down).
      await waitForText(page, 'deploys');
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

  it("says a run's content was deleted by the retention, keeps its record, and offers no follow-up", async () => {
    model.script('console-runs-old', [{ text: 'Hello.' }]);
    const created = await api.post('/agent/runs', {
      prompt: 'Say hello [script:console-runs-old]',
      title: 'Old run',
    });
    const runId = created.body.run_id as string;
    expect((await finished(runId)).state).toBe('SUCCEEDED');
    await app.dataSource.query(
      'UPDATE runs SET finished_at = DATE_SUB(UTC_TIMESTAMP(3), INTERVAL 8 DAY) WHERE id = ?',
      [runId],
    );
    await app.ambient.app.get(RunContentRetentionSweeper, { strict: false }).sweepNow();
    expect((await api.get(`/agent/runs/${runId}/conversation`)).status).toBe(404);

    const page = chromium.page;
    await step(page, 'content-deleted', async () => {
      await signIn(page);
      await page.goto(`${origin()}/console/runs/${runId}`);
      await waitForRunState(page, 'SUCCEEDED');
      await page.waitForSelector('[data-testid="content-deleted"]');
      const note = await text(page, '[data-testid="content-deleted"]');
      expect(note).toContain('deleted by the content retention');
      // The server's own detail: when, and the setting.
      expect(note).toMatch(/deleted at \d{4}-\d\d-\d\dT.*AMBIENT_RUN_CONTENT_RETENTION_DAYS/);
      expect(await text(page, 'h1')).toBe('Old run');
      expect(await page.$('#followup')).toBeNull();
      const buttons = (await page.evaluate(
        `[...document.querySelectorAll('button')].map((b) => b.innerText)`,
      )) as string[];
      expect(buttons).toContain('Re-run');
      expect(buttons).not.toContain('Download transcript');
    });
  });
});
