import { ApiKeysService } from '../src/modules/teams/api-keys.service';
import { TeamsService } from '../src/modules/teams/teams.service';
import { apiClient } from './support/api-client';
import { useTestApp } from './support/use-test-app';
import { waitFor } from './support/wait';

interface Bucket {
  key: string | null;
  name: string | null;
  runs: number;
  prompt_tokens: number;
  completion_tokens: number;
  cost_usd: number;
}

interface FinishedRun {
  run_id: string;
  state: string;
  creator?: { uid: string; display_name: string };
  request_usage: {
    inference_cost_usd: number;
    compute_cost_usd: number;
    model_token_usage: {
      model_id: string;
      tokens_by_category: { input: number; output: number };
    }[];
  };
}

/** What a run used, as its own request_usage says. */
function usageOf(run: FinishedRun) {
  const entries = run.request_usage.model_token_usage;
  return {
    prompt: entries.reduce((sum, e) => sum + e.tokens_by_category.input, 0),
    completion: entries.reduce((sum, e) => sum + e.tokens_by_category.output, 0),
    cost: run.request_usage.inference_cost_usd + run.request_usage.compute_cost_usd,
  };
}

/** Runs executed through the fake model server, summed back through GET /usage. */
describe('usage (GET /usage)', () => {
  // $3600 an hour is a dollar a second: compute cost shows, and must be in the sums too.
  const { app, api, model } = useTestApp('usage', ['api', 'worker'], {
    'runs.computeCostPerHourUsd': 3600,
  });
  const runs: Record<'plain' | 'claude' | 'asAgent' | 'byAgent', FinishedRun> = {} as never;
  let agentUid: string;
  let teamId: string;
  let otherApi: ReturnType<typeof apiClient>;

  const finish = async (client: ReturnType<typeof apiClient>, body: object) => {
    const created = await client.post('/agent/runs', body);
    expect(created.status).toBe(200);
    const runId = created.body.run_id as string;
    return waitFor(
      async () => (await client.get(`/agent/runs/${runId}`)).body as FinishedRun,
      (run) => run.state === 'SUCCEEDED',
      { what: `run ${runId} to succeed`, timeoutMs: 60_000 },
    );
  };
  const usage = async (query: Record<string, string> = {}, client = api) => {
    const res = await client.get(`/usage?${new URLSearchParams(query).toString()}`);
    expect(res.status).toBe(200);
    return res.body as { from: string; to: string; group_by: string; buckets: Bucket[] };
  };

  beforeAll(async () => {
    model.script('usage-text', [{ text: 'Done.' }]);
    model.script('usage-tool', [
      { toolCalls: [{ name: 'run_command', arguments: { command: 'echo hi' } }] },
      { text: 'Ran it.' },
    ]);
    const agent = await api.post('/agent/identities', { name: 'usage-agent' });
    expect(agent.status).toBe(201);
    agentUid = agent.body.uid as string;
    const agentKey = await api.post(`/agent/identities/${agentUid}/api-keys`, {});
    const agentApi = apiClient(app.baseUrl, agentKey.body.key as string);

    runs.plain = await finish(api, { prompt: 'Plain [script:usage-text]' });
    runs.claude = await finish(api, {
      prompt: 'Two calls [script:usage-tool]',
      config: { model_id: 'fake-claude' },
    });
    runs.asAgent = await finish(api, {
      prompt: 'As the agent [script:usage-text]',
      agent_identity_uid: agentUid,
    });
    runs.byAgent = await finish(agentApi, { prompt: 'By the agent [script:usage-text]' });

    // Another team's run, on the same models: never in this team's figures.
    const teams = app.ambient.app.get(TeamsService);
    const other = await teams.createTeam(`usage-other-${Date.now()}`);
    const otherUser = await teams.createUser(other, { displayName: 'Eve', role: 'admin' });
    otherApi = apiClient(
      app.baseUrl,
      (await app.ambient.app.get(ApiKeysService).create(otherUser, 't')).key,
    );
    await finish(otherApi, { prompt: 'Theirs [script:usage-tool]' });

    const [row] = (await app.dataSource.query('SELECT team_id FROM runs WHERE id = ?', [
      runs.plain.run_id,
    ])) as { team_id: string }[];
    teamId = row.team_id;
  });

  const ours = () => Object.values(runs);
  const sum = (list: FinishedRun[]) =>
    list.map(usageOf).reduce(
      (total, u) => ({
        prompt: total.prompt + u.prompt,
        completion: total.completion + u.completion,
        cost: total.cost + u.cost,
      }),
      { prompt: 0, completion: 0, cost: 0 },
    );

  it("sums the team's runs by day to what their request_usage says, this month by default", async () => {
    const body = await usage();
    const now = new Date();
    expect(body.group_by).toBe('day');
    expect(body.from).toBe(
      new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString(),
    );
    const today = now.toISOString().slice(0, 10);
    expect(body.buckets.map((b) => b.key)).toEqual([today]);
    const expected = sum(ours());
    expect(expected.prompt).toBeGreaterThan(0);
    expect(body.buckets[0]).toEqual({
      key: today,
      name: null,
      runs: 4,
      prompt_tokens: expected.prompt,
      completion_tokens: expected.completion,
      cost_usd: expect.any(Number),
    });
    expect(body.buckets[0].cost_usd).toBeCloseTo(expected.cost, 5);
    // The fake server's counts: 5 completion tokens a call, one call per text run, two for the tool run.
    expect(expected.completion).toBe(5 * 5);
  });

  it('breaks the same runs down by model, identity, creator and source, most expensive first', async () => {
    const check = async (groupBy: string, groups: Record<string, FinishedRun[]>) => {
      const { buckets } = await usage({ group_by: groupBy });
      const expected = Object.entries(groups)
        .map(([key, list]) => ({ key, runs: list.length, ...sum(list) }))
        .sort((a, b) => b.cost - a.cost);
      expect(buckets.map((b) => [b.key, b.runs, b.prompt_tokens, b.completion_tokens])).toEqual(
        expected.map((e) => [e.key, e.runs, e.prompt, e.completion]),
      );
      buckets.forEach((b, i) => expect(b.cost_usd).toBeCloseTo(expected[i].cost, 5));
      for (let i = 1; i < buckets.length; i++) {
        expect(buckets[i - 1].cost_usd).toBeGreaterThanOrEqual(buckets[i].cost_usd);
      }
    };
    const userId = runs.plain.creator!.uid;
    await check('model', {
      'fake-model': [runs.plain, runs.asAgent, runs.byAgent],
      'fake-claude': [runs.claude],
    });
    await check('identity', {
      [userId]: [runs.plain, runs.claude],
      [agentUid]: [runs.asAgent, runs.byAgent],
    });
    await check('creator', {
      [userId]: [runs.plain, runs.claude, runs.asAgent],
      [agentUid]: [runs.byAgent],
    });
    await check('source', { API: ours() });
    // Identities and creators come with their names (an agent identity is a user of the team).
    const { buckets } = await usage({ group_by: 'identity' });
    expect(buckets.find((b) => b.key === agentUid)?.name).toBe('usage-agent');
    expect(buckets.find((b) => b.key === userId)?.name).toBe(runs.plain.creator!.display_name);
    expect((await usage({ group_by: 'model' })).buckets.every((b) => b.name === null)).toBe(true);
  });

  it('counts only runs created in [from, to)', async () => {
    const times = ours().map((run) => run.run_id);
    const rows = (await app.dataSource.query(
      'SELECT id, created_at FROM runs WHERE id IN (?) ORDER BY created_at, id',
      [times],
    )) as { id: string; created_at: Date }[];
    const first = new Date(rows[0].created_at);
    const last = new Date(rows[rows.length - 1].created_at);
    const total = async (query: Record<string, string>) =>
      (await usage({ ...query, group_by: 'source' })).buckets.reduce((n, b) => n + b.runs, 0);
    expect(
      await total({ from: first.toISOString(), to: new Date(last.getTime() + 1).toISOString() }),
    ).toBe(4);
    expect(await total({ from: first.toISOString(), to: last.toISOString() })).toBe(
      rows.filter((r) => new Date(r.created_at) < last).length,
    );
    expect(await total({ from: new Date(last.getTime() + 1).toISOString() })).toBe(0);
    expect(await total({ from: '2020-01-01T00:00:00Z', to: '2020-02-01T00:00:00Z' })).toBe(0);
  });

  it("gives another team only its own run, and this team's figures never include it", async () => {
    const theirs = await usage({ group_by: 'model' }, otherApi);
    expect(theirs.buckets.map((b) => [b.key, b.runs])).toEqual([['fake-model', 1]]);
    const mine = await usage({ group_by: 'model' });
    expect(mine.buckets.reduce((n, b) => n + b.runs, 0)).toBe(4);
  });

  it('counts the spend per team and catalogue model in Prometheus', async () => {
    const metric = app.ambient.metrics.registry.getSingleMetric('ambient_run_cost_usd_total')!;
    const values = (await metric.get()).values;
    const of = (model: string) =>
      values.find((v) => v.labels.team === teamId && v.labels.model === model)?.value ?? 0;
    expect(of('fake-model')).toBeCloseTo(sum([runs.plain, runs.asAgent, runs.byAgent]).cost, 5);
    expect(of('fake-claude')).toBeCloseTo(sum([runs.claude]).cost, 5);
    expect(values.filter((v) => v.labels.team === teamId)).toHaveLength(2);
  });

  it('refuses bad parameters with 400 naming the parameter', async () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ from: 'last week' }, /^from: must be an RFC 3339 timestamp/],
      [{ to: '2026-02-30T00:00:00Z' }, /^to: must be an RFC 3339 timestamp/],
      [
        { from: '2026-02-02T00:00:00Z', to: '2026-02-01T00:00:00Z' },
        /^from: must not be later than to/,
      ],
      [
        { from: '2024-01-01T00:00:00Z', to: '2026-01-01T00:00:00Z' },
        /^to: the range .* longer than 400 days/,
      ],
      [{ group_by: 'week' }, /^group_by: must be one of day, model, identity, source, creator/],
    ];
    for (const [query, detail] of cases) {
      const res = await api.get(`/usage?${new URLSearchParams(query).toString()}`);
      expect(res.status).toBe(400);
      expect(res.body.type).toMatch(/invalid-request$/);
      expect(res.body.detail).toMatch(detail);
    }
  });

  it('lets a viewer read it', async () => {
    const viewer = await api.post('/api-keys', { name: 'usage viewer', role: 'viewer' });
    const viewerApi = apiClient(app.baseUrl, viewer.body.key as string);
    const body = await usage({ group_by: 'model' }, viewerApi);
    expect(body.buckets.reduce((n, b) => n + b.runs, 0)).toBe(4);
  });
});
