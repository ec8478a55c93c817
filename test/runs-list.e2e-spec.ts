import { DataSource } from 'typeorm';
import { FakeModelServer, startFakeModelServer } from './fixtures/fake-model-server';
import { apiClient } from './support/api-client';
import { createTestEnvironment, startTestApp, TestApp, TestEnvironment } from './support/test-app';

interface Listed {
  run_id: string;
  title: string;
  state: string;
}

/** GET /agent/runs over HTTP: filters, sorts, keyset pages and the errors of each parameter. */
describe('GET /agent/runs', () => {
  let model: FakeModelServer;
  let env: TestEnvironment;
  let app: TestApp;
  let api: ReturnType<typeof apiClient>;
  let dataSource: DataSource;
  const ids: Record<string, string> = {};

  const list = async (query: string): Promise<Listed[]> => {
    const res = await api.get(`/agent/runs?${query}`);
    expect(res.status).toBe(200);
    return res.body.runs;
  };
  const titles = async (query: string) => (await list(query)).map((r) => r.title);

  beforeAll(async () => {
    model = await startFakeModelServer();
    env = createTestEnvironment('runs_list', model.url);
    app = await startTestApp(env, ['api']);
    api = apiClient(app.baseUrl, app.apiKey);
    dataSource = app.dataSource;
    const seed: [string, Record<string, unknown>][] = [
      [
        'alpha deploy pipeline',
        { config: { name: 'deployer' }, metadata: { team: 'web', env: 'prod' } },
      ],
      ['bravo nightly audit', { skill: 'acme/ops:audit', metadata: { team: 'web', env: 'dev' } }],
      ['charlie flaky tests', { config: { name: 'deployer' }, metadata: { team: 'api' } }],
      ['delta dependency bump', { skill: 'acme/ops:bump' }],
      ['echo release notes', {}],
    ];
    for (const [title, body] of seed) {
      const res = await api.post('/agent/runs', {
        prompt: `Please handle: ${title}`,
        title,
        ...body,
      });
      expect(res.status).toBe(200);
      ids[title.split(' ')[0]] = res.body.run_id;
    }
    // Distinct, known timestamps and states (no worker runs in this file).
    const states = ['SUCCEEDED', 'FAILED', 'SUCCEEDED', 'QUEUED', 'CANCELLED'];
    for (const [i, name] of ['alpha', 'bravo', 'charlie', 'delta', 'echo'].entries()) {
      await dataSource.query(
        `UPDATE runs SET state = ?, created_at = ?, updated_at = ? WHERE id = ?`,
        [
          states[i],
          new Date(Date.UTC(2026, 0, 1 + i, 0, 0, 0, 123)),
          new Date(Date.UTC(2026, 1, 10 - i)),
          ids[name],
        ],
      );
    }
  });

  afterAll(async () => {
    await app?.close();
    await env?.destroy();
    await model?.close();
  });

  it('sorts by updated_at descending by default, and by created_at, title and agent on request', async () => {
    expect(await titles('')).toEqual([
      'alpha deploy pipeline',
      'bravo nightly audit',
      'charlie flaky tests',
      'delta dependency bump',
      'echo release notes',
    ]);
    expect((await titles('sort_by=created_at&sort_order=asc'))[0]).toBe('alpha deploy pipeline');
    expect((await titles('sort_by=created_at'))[0]).toBe('echo release notes');
    expect(await titles('sort_by=title&sort_order=asc')).toEqual([...(await titles(''))].sort());
    const byAgent = await titles('sort_by=agent&sort_order=asc');
    expect(byAgent.slice(0, 2)).toEqual(['bravo nightly audit', 'delta dependency bump']);
    const byAgentDesc = await titles('sort_by=agent&sort_order=desc');
    expect(byAgentDesc.slice(0, 2)).toEqual(['delta dependency bump', 'bravo nightly audit']);
  });

  it('filters by state (repeatable), name, skill, time and metadata', async () => {
    expect((await titles('state=SUCCEEDED&state=FAILED')).sort()).toEqual([
      'alpha deploy pipeline',
      'bravo nightly audit',
      'charlie flaky tests',
    ]);
    expect((await titles('name=deployer')).sort()).toEqual([
      'alpha deploy pipeline',
      'charlie flaky tests',
    ]);
    expect(await titles('skill=acme/ops:audit')).toEqual(['bravo nightly audit']);
    expect(await titles('skill_spec=acme/ops:bump')).toEqual(['delta dependency bump']);
    expect((await titles('created_after=2026-01-03T00:00:00Z')).sort()).toEqual([
      'charlie flaky tests',
      'delta dependency bump',
      'echo release notes',
    ]);
    expect(await titles('created_before=2026-01-02T00:00:00.123Z')).toEqual([
      'alpha deploy pipeline',
    ]);
    expect((await titles('metadata[team]=web')).sort()).toEqual([
      'alpha deploy pipeline',
      'bravo nightly audit',
    ]);
    expect(await titles('metadata[team]=web&metadata[env]=prod')).toEqual([
      'alpha deploy pipeline',
    ]);
    expect(await titles('source=API&environment_id=empty-environment&state=QUEUED')).toEqual([
      'delta dependency bump',
    ]);
  });

  it('searches title, prompt and skill without scanning, and finds a run by its id', async () => {
    expect(await titles('q=flaky')).toEqual(['charlie flaky tests']);
    expect(await titles('q=nightly%20audit')).toEqual(['bravo nightly audit']);
    expect(await titles(`q=${ids.echo}`)).toEqual(['echo release notes']);
    expect(await titles('q=nothing-matches-this')).toEqual([]);
  });

  it('pages with a keyset cursor that binds the filters', async () => {
    const first = await api.get('/agent/runs?limit=2&sort_by=created_at');
    expect(first.body.page_info).toEqual({ has_next_page: true, next_cursor: expect.any(String) });
    const seen = first.body.runs.map((r: Listed) => r.title);
    let cursor = first.body.page_info.next_cursor;
    while (cursor) {
      const page = await api.get(
        `/agent/runs?limit=2&sort_by=created_at&cursor=${encodeURIComponent(cursor)}`,
      );
      expect(page.status).toBe(200);
      seen.push(...page.body.runs.map((r: Listed) => r.title));
      cursor = page.body.page_info.has_next_page ? page.body.page_info.next_cursor : null;
    }
    expect(seen).toEqual(await titles('sort_by=created_at'));

    const replayed = await api.get(
      `/agent/runs?limit=2&sort_by=created_at&state=FAILED&cursor=${encodeURIComponent(first.body.page_info.next_cursor)}`,
    );
    expect(replayed.status).toBe(400);
    expect(replayed.body.detail).toMatch(/^cursor:/);
    const otherSort = await api.get(
      `/agent/runs?limit=2&cursor=${encodeURIComponent(first.body.page_info.next_cursor)}`,
    );
    expect(otherSort.status).toBe(400);
  });

  it.each([
    ['limit=0', /^limit:/],
    ['limit=501', /^limit:/],
    ['limit=ten', /^limit:/],
    ['sort_by=colour', /^sort_by:/],
    ['sort_order=up', /^sort_order:/],
    ['state=DONE', /^state:/],
    ['source=EMAIL', /^source:/],
    ['execution_location=MARS', /^execution_location:/],
    ['created_after=yesterday', /^created_after:/],
    ['updated_after=2026-01-01', /^updated_after:/],
    ['environment_id=abc', /^environment_id:/],
    ['artifact_type=VIDEO', /^artifact_type:/],
    ['cursor=not-a-cursor', /^cursor:/],
    [
      'metadata[a]=1&metadata[b]=1&metadata[c]=1&metadata[d]=1&metadata[e]=1&metadata[f]=1',
      /^metadata/,
    ],
    ['metadata[bad%20key]=1', /^metadata/],
  ])('refuses %s with 400 naming the parameter', async (query, detail) => {
    const res = await api.get(`/agent/runs?${query}`);
    expect(res.status).toBe(400);
    expect(res.body.type).toMatch(/invalid-request$/);
    expect(res.body.detail).toMatch(detail);
  });

  it('answers 404 for an ancestor that does not exist', async () => {
    const res = await api.get('/agent/runs?ancestor_run_id=00000000-0000-0000-0000-000000000000');
    expect(res.status).toBe(404);
  });

  it('answers feature_not_available for metadata filters when they are switched off', async () => {
    await app.close();
    app = await startTestApp(env, ['api'], { 'runs.metadataFilterEnabled': false });
    api = apiClient(app.baseUrl, app.apiKey);
    const res = await api.get('/agent/runs?metadata[team]=web');
    expect(res.status).toBe(403);
    expect(res.body.type).toMatch(/feature-not-available$/);
    expect((await api.get('/agent/runs?state=QUEUED')).status).toBe(200);
  });
});
