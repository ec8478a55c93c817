import type { Page } from 'puppeteer-core';
import { ApiKeysService } from '../src/modules/teams/api-keys.service';
import { TeamsService } from '../src/modules/teams/teams.service';
import { apiClient } from './support/api-client';
import { blockRunAsHarnessWould, TestRequest } from './support/blocked-runs';
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
import { useTestApp } from './support/use-test-app';
import { waitFor } from './support/wait';

interface ApprovalBody {
  id: string;
  decision: string | null;
  comment: string | null;
  decided_by: { name: string } | null;
}

/** A command longer than any screen is wide: the inbox must show all of it, wrapped. */
const LONG_COMMAND =
  'git push --force-with-lease origin release/2024-12-31 && ' +
  Array.from({ length: 12 }, (_, i) => `curl -fsS https://deploy.example.com/hooks/step-${i}`).join(
    ' && ',
  );

/** Signs in with `key` and opens the console at `route`. */
async function signIn(page: Page, baseUrl: string, key: string, route: string) {
  const origin = new URL(baseUrl).origin;
  await page.goto(`${origin}/console/`);
  await fill(page, 'API key', key);
  await clickText(page, 'Sign in');
  await page.waitForSelector('nav[aria-label="Main"]');
  await page.goto(`${origin}/console${route}`);
}

/**
 * The approvals inbox and a BLOCKED run's page in Chromium against a real API (api role only, so
 * a decided run stays QUEUED where the test can see it). Runs are put into BLOCKED as the
 * harness does (blockRunAsHarnessWould): the request rows and the guarded transition.
 */
describe('console approvals (Chromium)', () => {
  // Declared first, so its afterAll closes the browser before the app closes (hooks run in order).
  const chromium = useChromium();
  let settings: Record<string, unknown>;
  let viewerKey: string;
  let otherApi: ReturnType<typeof apiClient>;

  beforeAll(async () => {
    settings = { 'server.port': await freePort(), 'server.consoleDir': buildConsole() };
  }, 120_000);
  const { api, app } = useTestApp('console-approvals', ['api'], () => settings, { model: false });

  beforeAll(async () => {
    const teams = app.ambient.app.get(TeamsService, { strict: false });
    const keys = app.ambient.app.get(ApiKeysService, { strict: false });
    const team = (await teams.findByName('default'))!;
    const viewer = await teams.createUser(team, { displayName: 'Vic Viewer', role: 'viewer' });
    viewerKey = (await keys.create(viewer, 'viewer')).key;
    const other = await teams.createUser(team, { displayName: 'Olga Other', role: 'member' });
    otherApi = apiClient(app.baseUrl, (await keys.create(other, 'other')).key);
  });

  const blockedRun = async (title: string, requests: TestRequest[]) => {
    const runId = (await api.post('/agent/runs', { prompt: 'Release it', title })).body
      .run_id as string;
    return { runId, ids: await blockRunAsHarnessWould(app, runId, requests) };
  };
  const approvalsOf = async (runId: string) =>
    (await api.get(`/agent/runs/${runId}/approvals`)).body.approvals as ApprovalBody[];

  /** The card of request `id` (waits for it). */
  const card = (page: Page, id: string) => page.waitForSelector(`[data-approval-id="${id}"]`);
  const cardText = (page: Page, id: string) =>
    page.evaluate(
      `document.querySelector('[data-approval-id="${id}"]').innerText`,
    ) as Promise<string>;
  /** Clicks the button labelled `label` inside request `id`'s card. */
  async function clickIn(page: Page, id: string, label: string) {
    await card(page, id);
    await clickText(page, label, `[data-approval-id="${id}"] button`);
  }
  async function waitForCardText(page: Page, id: string, text: string) {
    await page.waitForFunction(
      `document.querySelector('[data-approval-id="${id}"]')?.textContent.includes(${JSON.stringify(text)})`,
    );
  }
  /** Waits until the nav's pending count reads `text` (null: no badge, nothing pending). */
  const waitForPendingCount = (page: Page, text: string | null) =>
    page.waitForFunction(
      `(document.querySelector('[data-testid="pending-approvals"]')?.textContent ?? null) === ${JSON.stringify(text)}`,
    );

  it('approves a request from the inbox (the run leaves BLOCKED) and records a denial with its comment', async () => {
    const { page } = chromium;
    const push = await blockedRun('Release to production', [
      { arguments: { command: LONG_COMMAND, cwd: '/workspace/app' }, summary: 'run `git push`' },
    ]);
    const deploy = await blockedRun('Deploy the docs', [
      {
        tool: 'deploy',
        arguments: { target: 'docs', version: '2.1.0' },
        rule: { mcp_tool: 'deploy', effect: 'ask' },
        summary: 'call the MCP tool deploy',
      },
    ]);
    await step(page, 'approvals-inbox-approve', async () => {
      await page.setViewport({ width: 1024, height: 900 });
      await signIn(page, app.baseUrl, app.apiKey, '/approvals');
      await card(page, push.ids[0]);
      await waitForPendingCount(page, '2 pending');

      // The call in full: every character of the long command, wrapped instead of scrolled.
      const command = await page.evaluate(
        `document.querySelector('[data-approval-id="${push.ids[0]}"] pre[aria-label="Command"]').textContent`,
      );
      expect(command).toBe(LONG_COMMAND);
      expect(await horizontalOverflow(page)).toBe(0);
      const pushText = await cardText(page, push.ids[0]);
      expect(pushText).toContain('Release to production');
      expect(pushText).toContain('run_command');
      expect(pushText).toContain('"cwd": "/workspace/app"');
      expect(pushText).toContain('commands matching /^git push/ (ask)');
      const deployText = await cardText(page, deploy.ids[0]);
      expect(deployText).toContain('"version": "2.1.0"');
      expect(deployText).toContain('MCP tool deploy (ask)');

      await clickIn(page, push.ids[0], 'Approve');
      await waitForCardText(page, push.ids[0], 'Approved by');
      await page.waitForSelector(`[data-approval-id="${push.ids[0]}"] [data-state="QUEUED"]`);
      expect(await api.runState(push.runId)).toBe('QUEUED');
      expect((await approvalsOf(push.runId))[0].decision).toBe('approve');
      await waitForPendingCount(page, '1 pending');
    });

    await step(page, 'approvals-inbox-deny', async () => {
      await card(page, deploy.ids[0]);
      await page.type(`[data-approval-id="${deploy.ids[0]}"] textarea`, 'Not on a Friday');
      await clickIn(page, deploy.ids[0], 'Deny');
      await waitForCardText(page, deploy.ids[0], 'Denied by');
      await waitForCardText(page, deploy.ids[0], 'Not on a Friday');
      const [denied] = await approvalsOf(deploy.runId);
      expect(denied).toMatchObject({ decision: 'deny', comment: 'Not on a Friday' });
      expect(await api.runState(deploy.runId)).toBe('QUEUED');
      await waitForPendingCount(page, null);

      await clickText(page, 'Decided', 'nav.tabs a');
      await waitForCardText(page, deploy.ids[0], 'Not on a Friday');
      await waitForCardText(page, push.ids[0], 'Approved by');
      expect(await page.$$(`[data-approval-id] button`)).toHaveLength(0);
    });
  });

  it('says who decided first when someone else did, and keeps the page', async () => {
    const { page } = chromium;
    const run = await blockedRun('Tag the release', [{}, { kind: 'question' }]);
    await step(page, 'approvals-conflict', async () => {
      await signIn(page, app.baseUrl, app.apiKey, '/approvals');
      await card(page, run.ids[0]);
      // Decided behind the page's back by another member.
      const other = await otherApi.post(`/agent/runs/${run.runId}/approvals/${run.ids[0]}`, {
        decision: 'deny',
        comment: 'I am on it',
      });
      expect(other.status).toBe(200);

      await clickIn(page, run.ids[0], 'Approve');
      await waitForCardText(page, run.ids[0], 'Someone else decided first');
      const text = await cardText(page, run.ids[0]);
      expect(text).toContain('Denied by Olga Other');
      expect(text).toContain('I am on it');
      expect((await approvalsOf(run.runId))[0]).toMatchObject({
        decision: 'deny',
        decided_by: { name: 'Olga Other' },
      });
      // The page is still there: the other request can still be answered.
      await card(page, run.ids[1]);
      expect(await api.runState(run.runId)).toBe('BLOCKED');
    });
  });

  it("shows a BLOCKED run in amber with 'Waiting for a person', answers its question there and keeps the history", async () => {
    const { page } = chromium;
    const run = await blockedRun('Which branch', [
      { kind: 'question', arguments: { question: 'Which branch do I release from?' } },
    ]);
    await step(page, 'approvals-run-page', async () => {
      await signIn(page, app.baseUrl, app.apiKey, '/runs');
      await page.waitForSelector(`a[href="/console/runs/${run.runId}"]`);
      await page.waitForSelector('.badge[data-state="BLOCKED"]');
      // BLOCKED has its own colour: not a running (unstyled), failed or cancelled run's.
      const colours = (await page.evaluate(`(() => {
        const colour = (state) => {
          const badge = document.createElement('span');
          badge.className = 'badge state-' + state;
          document.body.append(badge);
          const value = getComputedStyle(badge).color + ' ' + getComputedStyle(badge).backgroundColor;
          badge.remove();
          return value;
        };
        const blocked = document.querySelector('.badge[data-state="BLOCKED"]');
        return {
          blocked: getComputedStyle(blocked).color + ' ' + getComputedStyle(blocked).backgroundColor,
          others: ['inprogress', 'queued', 'failed', 'cancelled', 'succeeded'].map(colour),
        };
      })()`)) as { blocked: string; others: string[] };
      expect(colours.others).not.toContain(colours.blocked);

      await page.goto(`${new URL(app.baseUrl).origin}/console/runs/${run.runId}`);
      await waitForRunState(page, 'BLOCKED');
      await waitForText(page, 'Waiting for a person');
      await waitForCardText(page, run.ids[0], 'Which branch do I release from?');
      expect(await page.$$eval('button', (b) => b.map((x) => x.textContent))).toContain(
        'Cancel run',
      );

      await page.type(`[data-approval-id="${run.ids[0]}"] textarea`, 'release/2.1');
      await clickIn(page, run.ids[0], 'Send answer');
      await waitForRunState(page, 'QUEUED');
      await waitForText(page, 'Decided requests');
      await waitForCardText(page, run.ids[0], 'Answered by');
      await waitForCardText(page, run.ids[0], 'release/2.1');
      expect(await page.$('#waiting-heading')).toBeNull();
      expect((await approvalsOf(run.runId))[0]).toMatchObject({
        decision: 'answer',
        comment: 'release/2.1',
      });
    });
  });

  it('shows a viewer the requests, no buttons, and why', async () => {
    const { page } = chromium;
    const run = await blockedRun('Viewer sees this', [
      { arguments: { command: 'git push origin main' } },
    ]);
    await step(page, 'approvals-viewer', async () => {
      await signIn(page, app.baseUrl, viewerKey, '/approvals');
      await waitForCardText(page, run.ids[0], 'git push origin main');
      await waitForCardText(page, run.ids[0], 'Viewers can see requests but not decide them');
      expect(await page.$$(`[data-approval-id] button`)).toHaveLength(0);

      await page.goto(`${new URL(app.baseUrl).origin}/console/runs/${run.runId}`);
      await waitForText(page, 'Waiting for a person');
      await waitForCardText(page, run.ids[0], 'Viewers can see requests but not decide them');
      expect(await page.$$(`[data-approval-id] button`)).toHaveLength(0);
      expect(await api.runState(run.runId)).toBe('BLOCKED');
    });
  });
});

/**
 * The real flow (api + worker, bubblewrap, the fake model): a run whose command an approval rule
 * asks about goes BLOCKED by itself; approved in the inbox, the command runs and the run
 * finishes; denied on the run page with a comment, the model is told who denied it and why.
 */
describe('console approvals of real blocked runs (Chromium, api + worker)', () => {
  const chromium = useChromium();
  let settings: Record<string, unknown>;

  beforeAll(async () => {
    settings = { 'server.port': await freePort(), 'server.consoleDir': buildConsole() };
  }, 120_000);
  const { api, app, model } = useTestApp(
    'console-approvals-real',
    ['api', 'worker'],
    () => settings,
  );

  /** A run whose first step runs `command` (the run's own rule asks about it), then ends. */
  async function askingRun(command: string) {
    const script = `console-ap-${Math.random().toString(36).slice(2)}`;
    model.script(script, [
      { toolCalls: [{ name: 'run_command', arguments: { command } }] },
      { text: 'done' },
    ]);
    const created = await api.post('/agent/runs', {
      prompt: `Release [script:${script}]`,
      title: `Asks before ${command}`,
      config: { approvals: [{ command: '^echo release', effect: 'ask' }] },
    });
    expect(created.status).toBe(200);
    const runId = created.body.run_id as string;
    const blocked = await waitFor(
      async () => (await api.get(`/agent/runs/${runId}`)).body as { state: string },
      (run) => ['BLOCKED', 'SUCCEEDED', 'FAILED', 'ERROR'].includes(run.state),
      { what: `run ${runId} to block`, timeoutMs: 120_000 },
    );
    expect(blocked.state).toBe('BLOCKED');
    const [request] = (await api.get(`/agent/runs/${runId}/approvals`)).body
      .approvals as ApprovalBody[];
    return { runId, script, requestId: request.id };
  }
  /** What the model was told as tool results when the run resumed (its second request). */
  const toolResultsAfterResume = (script: string) =>
    (model.requests.find((r) => r.script === script && r.step === 1)?.body.messages ?? [])
      .filter((m) => m.role === 'tool')
      .map((m) => String(m.content));

  it('approves in the inbox: the command runs and the run succeeds', async () => {
    const { page } = chromium;
    const { runId, script, requestId } = await askingRun('echo release-approved');
    await step(page, 'approvals-real-approve', async () => {
      await signIn(page, app.baseUrl, app.apiKey, '/approvals');
      await page.waitForSelector(`[data-approval-id="${requestId}"] pre[aria-label="Command"]`);
      await clickText(page, 'Approve', `[data-approval-id="${requestId}"] button`);
      await page.waitForFunction(
        `document.querySelector('[data-approval-id="${requestId}"]')?.textContent.includes('Approved by')`,
      );
      await clickText(page, `Asks before echo release-approved`, `[data-approval-id] a`);
      await waitForRunState(page, 'SUCCEEDED', 120_000);
    });
    expect(await api.runState(runId)).toBe('SUCCEEDED');
    const [output] = toolResultsAfterResume(script);
    expect(JSON.parse(output)).toMatchObject({ exit_code: 0, output: 'release-approved\n' });
  }, 300_000);

  it('denies on the run page with a comment: the model is told who and why', async () => {
    const { page } = chromium;
    const { runId, script, requestId } = await askingRun('echo release-denied');
    await step(page, 'approvals-real-deny', async () => {
      await signIn(page, app.baseUrl, app.apiKey, `/runs/${runId}`);
      await waitForRunState(page, 'BLOCKED');
      await waitForText(page, 'Waiting for a person');
      await page.waitForSelector(`[data-approval-id="${requestId}"] textarea`);
      await page.type(`[data-approval-id="${requestId}"] textarea`, 'Wait for the freeze to end');
      await clickText(page, 'Deny', `[data-approval-id="${requestId}"] button`);
      await waitForRunState(page, 'SUCCEEDED', 120_000);
      await waitForText(page, 'Decided requests');
    });
    const [told] = toolResultsAfterResume(script);
    expect(told).toContain('denied this call, so it was not run');
    expect(told).toContain('Wait for the freeze to end');
  }, 300_000);
});
