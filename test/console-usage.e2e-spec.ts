import type { Page } from 'puppeteer-core';
import { formatUsd as usd } from '../console/src/format/money';
import {
  buildConsole,
  clickText,
  fill,
  freePort,
  horizontalOverflow,
  openSection,
  step,
  useChromium,
  waitForText,
} from './support/console-browser';
import { useTestApp } from './support/use-test-app';
import { waitFor } from './support/wait';

/** The test catalogue's prices, per token (test/support/test-app.ts). */
const PRICES: Record<string, { input: number; output: number }> = {
  'fake-model': { input: 1e-6, output: 2e-6 },
  'fake-claude': { input: 3e-6, output: 15e-6 },
};

/** Sets a date input the way a date picker does (typing into one depends on the locale). */
async function setDate(page: Page, id: string, value: string): Promise<void> {
  await page.evaluate(
    `(() => {
      const input = document.getElementById(${JSON.stringify(id)});
      Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set.call(input, ${JSON.stringify(value)});
      input.dispatchEvent(new Event('input', { bubbles: true }));
    })()`,
  );
}

/** The visible rows of the table labelled `label`, cells joined by " | ". */
function tableRows(page: Page, label: string): Promise<string[]> {
  return page.evaluate(
    `[...document.querySelectorAll('table[aria-label=${JSON.stringify(label)}] tbody tr')]
      .map((tr) => [...tr.cells].map((td) => td.innerText.trim()).join(' | '))`,
  ) as Promise<string[]>;
}

/**
 * The Usage page in Chromium after runs with known token counts (the fake model server counts
 * 10 prompt tokens a message and 5 completion tokens a call): totals, breakdowns, the chart, a
 * range without runs, each run's cost in the list and on its page, and a 390 px wide screen.
 */
describe('console usage page (Chromium)', () => {
  const chromium = useChromium();
  let settings: Record<string, unknown>;
  beforeAll(async () => {
    settings = { 'server.port': await freePort(), 'server.consoleDir': buildConsole() };
  }, 120_000);
  // No compute cost: every dollar shown comes from tokens × catalogue prices.
  const { api, app, model } = useTestApp('console_usage', ['api', 'worker'], () => ({
    ...settings,
    'runs.computeCostPerHourUsd': 0,
  }));

  const runToSuccess = async (body: object) => {
    const created = await api.post('/agent/runs', body);
    expect(created.status).toBe(200);
    const runId = created.body.run_id as string;
    await waitFor(
      () => api.runState(runId),
      (state) => state === 'SUCCEEDED',
      { what: `run ${runId} to succeed`, timeoutMs: 60_000 },
    );
    return runId;
  };

  /** What the fake server was asked under `script`, priced for `modelId`. */
  const expectedOf = (script: string, modelId: string) => {
    const calls = model.requests.filter((r) => r.script === script);
    const prompt = calls.reduce((n, r) => n + 10 * r.body.messages.length, 0);
    const completion = 5 * calls.length;
    const price = PRICES[modelId];
    return { prompt, completion, cost: prompt * price.input + completion * price.output };
  };

  it('shows the total cost, the breakdowns and each run’s cost, and fits 390 px', async () => {
    model.script('usage-page-text', [{ text: 'Done.' }]);
    model.script('usage-page-tool', [
      { toolCalls: [{ name: 'run_command', arguments: { command: 'echo hi' } }] },
      { text: 'Ran it.' },
    ]);
    const plain = await runToSuccess({ prompt: 'Plain [script:usage-page-text]' });
    const claude = await runToSuccess({
      prompt: 'Tool [script:usage-page-tool]',
      config: { model_id: 'fake-claude' },
    });
    const plainUsage = expectedOf('usage-page-text', 'fake-model');
    const claudeUsage = expectedOf('usage-page-tool', 'fake-claude');
    expect(plainUsage.completion).toBe(5);
    expect(claudeUsage.completion).toBe(10);
    const total = plainUsage.cost + claudeUsage.cost;
    const origin = new URL(app.baseUrl).origin;
    const { page } = chromium;

    await step(page, 'usage-page', async () => {
      await page.setViewport({ width: 390, height: 844 });
      await page.goto(`${origin}/console/`);
      await fill(page, 'API key', app.apiKey);
      await clickText(page, 'Sign in');
      await page.waitForSelector('nav[aria-label="Main"]');
      // At 390 px the sections are behind the Menu button.
      await openSection(page, 'Usage');
      await waitForText(page, 'By creator');
      const totalCost = await page.$eval(
        '[data-testid="usage-total-cost"]',
        (el) => el.textContent,
      );
      expect(totalCost).toBe(usd(total));
      expect(await page.$eval('[data-testid="usage-runs"]', (el) => el.textContent)).toBe('2');
      expect(await tableRows(page, 'By model')).toEqual([
        `fake-claude | 1 | ${claudeUsage.prompt} | ${claudeUsage.completion} | ${usd(claudeUsage.cost)}`,
        `fake-model | 1 | ${plainUsage.prompt} | ${plainUsage.completion} | ${usd(plainUsage.cost)}`,
      ]);
      expect(await tableRows(page, 'By source')).toEqual([
        `API | 2 | ${plainUsage.prompt + claudeUsage.prompt} | 15 | ${usd(total)}`,
      ]);
      expect(await tableRows(page, 'By creator')).toHaveLength(1);
      expect(await tableRows(page, 'By identity')).toHaveLength(1);
      // Today's bar is the tallest: its tooltip names the day and its cost.
      const today = new Date().toISOString().slice(0, 10);
      const bar = (await page.evaluate(
        `document.querySelector('.cost-chart rect[data-day="${today}"] title')?.textContent`,
      )) as string;
      expect(bar).toBe(`${today}: ${usd(total)}`);
      expect(await horizontalOverflow(page)).toBeLessThanOrEqual(0);

      // A range without runs.
      await setDate(page, 'usage-from', '2020-01-01');
      await setDate(page, 'usage-to', '2020-01-31');
      await clickText(page, 'Show');
      await page.waitForFunction(
        `document.querySelector('[data-testid="usage-runs"]')?.textContent === '0'`,
      );
      expect(await page.$eval('[data-testid="usage-total-cost"]', (el) => el.textContent)).toBe(
        usd(0),
      );
      expect(await page.evaluate(`document.querySelectorAll('.cost-chart rect').length`)).toBe(31);
      expect(await horizontalOverflow(page)).toBeLessThanOrEqual(0);
    });

    await step(page, 'run-costs', async () => {
      await page.goto(`${origin}/console/runs`);
      await waitForText(page, usd(claudeUsage.cost));
      const costs = (await page.evaluate(
        `[...document.querySelectorAll('[data-testid="run-cost"]')].map((td) => td.innerText)`,
      )) as string[];
      expect(costs.sort()).toEqual([usd(claudeUsage.cost), usd(plainUsage.cost)].sort());
      expect(await horizontalOverflow(page)).toBeLessThanOrEqual(0);
      await page.goto(`${origin}/console/runs/${plain}`);
      await page.waitForSelector('[data-testid="run-cost"]');
      expect(await page.$eval('[data-testid="run-cost"]', (el) => el.textContent)).toContain(
        `· ${usd(plainUsage.cost)} (inference`,
      );
      expect(claude).toBeDefined();
    });
  });

  it('shows the team’s limits on the Usage page: an admin edits them, a viewer only reads', async () => {
    const origin = new URL(app.baseUrl).origin;
    const { page } = chromium;
    const signIn = async (key: string) => {
      await page.goto(`${origin}/console/`);
      await fill(page, 'API key', key);
      await clickText(page, 'Sign in');
      await page.waitForSelector('nav[aria-label="Main"]');
      await openSection(page, 'Usage');
      await page.waitForSelector('[data-testid="limit-max_concurrent_runs"]');
    };
    const limitText = (name: string) =>
      page.$eval(`[data-testid="limit-${name}"]`, (el) => el.textContent);

    await step(page, 'limits-admin', async () => {
      await signIn(app.apiKey);
      expect(await limitText('max_concurrent_runs')).toBe('No limit');
      await clickText(page, 'Edit limits');
      await fill(page, 'Runs at once', '2');
      await fill(page, 'Monthly budget (USD)', '150.5');
      await clickText(page, 'Save limits');
      await waitForText(page, 'Limits saved.');
      expect(await limitText('max_concurrent_runs')).toBe('2');
      expect(await limitText('monthly_budget_usd')).toBe('$150.50');
      expect(await limitText('max_run_cost_usd')).toBe('No limit');
      // What was spent this month, against the new budget: the inference the runs stored.
      const listed = (await api.get('/agent/runs?limit=100')).body.runs as {
        created_at: string;
        request_usage?: { inference_cost_usd?: number };
      }[];
      const monthStart = Date.parse(`${new Date().toISOString().slice(0, 7)}-01T00:00:00Z`);
      const spent = listed
        .filter((r) => Date.parse(r.created_at) >= monthStart)
        .reduce((sum, r) => sum + (r.request_usage?.inference_cost_usd ?? 0), 0);
      expect(spent).toBeGreaterThan(0);
      const budgetText = JSON.stringify(`${usd(spent)} of $150.50 spent`);
      await page.waitForFunction(
        `document.querySelector('[data-testid="budget-use"]')?.textContent.includes(${budgetText})`,
      );
      expect(await page.$eval('[data-testid="concurrency-use"]', (el) => el.textContent)).toContain(
        '0 of 2 running',
      );
    });
    expect((await api.get('/limits')).body).toEqual({
      max_concurrent_runs: 2,
      monthly_budget_usd: 150.5,
      max_run_cost_usd: null,
    });

    await step(page, 'limits-invalid', async () => {
      await clickText(page, 'Edit limits');
      await fill(page, 'Runs at once', '100001');
      await clickText(page, 'Save limits');
      await waitForText(page, 'max_concurrent_runs');
    });
    expect((await api.get('/limits')).body.max_concurrent_runs).toBe(2);

    const viewer = await api.post('/api-keys', { name: 'usage viewer', role: 'viewer' });
    expect(viewer.status).toBe(201);
    await step(page, 'limits-viewer', async () => {
      await clickText(page, 'Sign out');
      await signIn(viewer.body.key as string);
      expect(await limitText('max_concurrent_runs')).toBe('2');
      await waitForText(page, 'Admins can change these limits.');
      const buttons = (await page.evaluate(
        `[...document.querySelectorAll('button')].map((b) => b.textContent)`,
      )) as string[];
      expect(buttons).not.toContain('Edit limits');
    });
    await api.put('/limits', { max_concurrent_runs: null, monthly_budget_usd: null });
  });
});
