import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { useTestDatabase } from '../../../test/support/unit/test-database';
import { ApiError } from '../../common/errors/api-error';
import { Run } from './entities/run.entity';
import { parseRunListParams } from './run-list.params';
import { RunListQuery } from './run-list.repository';

/**
 * RunListQuery against a throw-away MariaDB/MySQL database on 127.0.0.1:3306 (root, no password,
 * or DATABASE_HOST/PORT/USER/PASSWORD): ordering with ties across pages, the agent sort's runs
 * without a skill, every relation filter and the full-text search.
 */
const TEAM = 'TeamAAAAAAAAAAAAAAAAAA';
const OTHER_TEAM = 'TeamBBBBBBBBBBBBBBBBBB';
const ENV = 'EnvAAAAAAAAAAAAAAAAAAA';

interface Seed {
  id: string;
  teamId: string;
  title: string;
  prompt: string;
  state: string;
  source: string;
  skillSpec: string | null;
  environmentId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

const at = (day: number, ms: number) => new Date(Date.UTC(2026, 0, day, 12, 0, 0, ms));

/** 24 runs in TEAM with deliberate ties on every sort key, 3 in OTHER_TEAM. */
function seeds(): Seed[] {
  const titles = ['deploy api', 'audit logs', 'deploy api', 'bump deps', 'audit logs', 'zeta task'];
  const skills = [null, 'acme/ops:audit', 'acme/ops:bump', null, 'acme/ops:audit', 'acme/web:zed'];
  const states = ['SUCCEEDED', 'FAILED', 'QUEUED', 'CANCELLED'];
  const runs: Seed[] = [];
  for (let i = 0; i < 24; i++) {
    runs.push({
      id: randomUUID(),
      teamId: TEAM,
      title: titles[i % titles.length],
      prompt: `Please handle item number ${i} in the ${i % 2 ? 'frontend' : 'backend'} repository`,
      state: states[i % states.length],
      source: i % 3 ? 'API' : 'SLACK',
      skillSpec: skills[i % skills.length],
      environmentId: i % 4 === 0 ? null : ENV,
      // Five distinct creation instants and four update instants, each a few milliseconds apart.
      createdAt: at(1 + (i % 5), 100 + (i % 5)),
      updatedAt: at(10, 200 + (i % 4)),
    });
  }
  for (let i = 0; i < 3; i++) {
    runs.push({
      ...runs[i],
      id: randomUUID(),
      teamId: OTHER_TEAM,
      title: `other team ${i}`,
    });
  }
  return runs;
}

describe('RunListQuery (database)', () => {
  let dataSource: DataSource;
  let query: RunListQuery;
  let runs: Seed[];
  const mine = () => runs.filter((r) => r.teamId === TEAM);

  const db = useTestDatabase('listq');

  beforeAll(async () => {
    dataSource = db.dataSource;
    runs = seeds();
    await seedDatabase(dataSource, runs);
    query = new RunListQuery(dataSource);
  });

  const params = (raw: Record<string, unknown>) =>
    parseRunListParams(raw, { metadataFilterEnabled: true });

  /** Every page of a query, checking the page size and the has-next flag on the way. */
  async function allPages(raw: Record<string, unknown>, limit: number): Promise<string[]> {
    const ids: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 100; page++) {
      const result = await query.list(TEAM, params({ ...raw, limit: String(limit), cursor }));
      expect(result.runs.length).toBeLessThanOrEqual(limit);
      ids.push(...result.runs.map((r) => r.id));
      if (!result.nextCursor) return ids;
      expect(result.runs).toHaveLength(limit);
      cursor = result.nextCursor;
    }
    throw new Error('pagination did not end');
  }

  const ids = async (raw: Record<string, unknown>) =>
    (await query.list(TEAM, params({ ...raw, limit: '500' }))).runs.map((r) => r.id);

  const byId = (a: Seed, b: Seed) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

  function expectedOrder(key: (r: Seed) => number | string, order: 'asc' | 'desc'): string[] {
    const sign = order === 'asc' ? 1 : -1;
    return [...mine()]
      .sort((a, b) => {
        const [x, y] = [key(a), key(b)];
        return sign * (x < y ? -1 : x > y ? 1 : byId(a, b));
      })
      .map((r) => r.id);
  }

  describe.each(['asc', 'desc'] as const)('sorted %s', (order) => {
    it.each([1, 3, 7, 24])('pages by created_at with ties, %i per page', async (limit) => {
      const expected = expectedOrder((r) => r.createdAt.getTime(), order);
      expect(await allPages({ sort_by: 'created_at', sort_order: order }, limit)).toEqual(expected);
    });

    it('pages by updated_at (the default) with ties', async () => {
      const expected = expectedOrder((r) => r.updatedAt.getTime(), order);
      expect(await allPages({ sort_order: order }, 5)).toEqual(expected);
    });

    it('pages by title with ties', async () => {
      expect(await allPages({ sort_by: 'title', sort_order: order }, 4)).toEqual(
        expectedOrder((r) => r.title, order),
      );
    });

    it('pages by agent with the runs without a skill last', async () => {
      const withSkill = mine().filter((r) => r.skillSpec !== null);
      const sign = order === 'asc' ? 1 : -1;
      const expected = [
        ...withSkill
          .sort((a, b) => {
            const [x, y] = [a.skillSpec!, b.skillSpec!];
            return sign * (x < y ? -1 : x > y ? 1 : byId(a, b));
          })
          .map((r) => r.id),
        ...mine()
          .filter((r) => r.skillSpec === null)
          .sort((a, b) => sign * byId(a, b))
          .map((r) => r.id),
      ];
      for (const limit of [1, 3, 5, 24]) {
        expect(await allPages({ sort_by: 'agent', sort_order: order }, limit)).toEqual(expected);
      }
    });
  });

  it('keeps teams apart', async () => {
    expect((await ids({})).sort()).toEqual(
      mine()
        .map((r) => r.id)
        .sort(),
    );
  });

  it('returns whole Run entities with millisecond timestamps', async () => {
    const [first] = (await query.list(TEAM, params({ sort_by: 'created_at', limit: '1' }))).runs;
    const seed = runs.find((r) => r.id === first.id)!;
    expect(first).toBeInstanceOf(Run);
    expect(first.createdAt.getTime()).toBe(seed.createdAt.getTime());
    expect(first.prompt).toBe(seed.prompt);
  });

  const idsWhere = (pick: (r: Seed) => boolean) =>
    mine()
      .filter(pick)
      .map((r) => r.id)
      .sort();

  it.each<[string, Record<string, unknown>, (r: Seed) => boolean]>([
    ['state', { state: ['FAILED', 'QUEUED'] }, (r) => ['FAILED', 'QUEUED'].includes(r.state)],
    ['source', { source: 'SLACK' }, (r) => r.source === 'SLACK'],
    ['skill', { skill: 'acme/ops:audit' }, (r) => r.skillSpec === 'acme/ops:audit'],
    ['empty-environment', { environment_id: 'empty-environment' }, (r) => !r.environmentId],
    ['environment_id', { environment_id: ENV }, (r) => r.environmentId === ENV],
    [
      'created_after (strict, to the millisecond)',
      { created_after: at(3, 102).toISOString() },
      (r) => r.createdAt > at(3, 102),
    ],
    [
      'created_before (strict, to the millisecond)',
      { created_before: at(3, 102).toISOString() },
      (r) => r.createdAt < at(3, 102),
    ],
    [
      'created_before with sub-millisecond digits',
      { created_before: '2026-01-03T12:00:00.102001Z' },
      (r) => r.createdAt <= at(3, 102),
    ],
    [
      'updated_after',
      { updated_after: at(10, 201).toISOString() },
      (r) => r.updatedAt > at(10, 201),
    ],
  ])('filters by %s', async (_name, raw, pick) => {
    expect((await ids(raw)).sort()).toEqual(idsWhere(pick));
  });

  it('ANDs metadata pairs', async () => {
    const [a, b, c] = mine();
    expect((await ids({ 'metadata[team]': 'web' })).sort()).toEqual([a.id, b.id].sort());
    expect(await ids({ 'metadata[team]': 'web', 'metadata[env]': 'prod' })).toEqual([a.id]);
    expect(await ids({ 'metadata[team]': 'web', 'metadata[env]': 'dev' })).toEqual([b.id]);
    expect(await ids({ 'metadata[team]': 'api', 'metadata[env]': 'prod' })).toEqual([]);
    expect(await ids({ 'metadata[team]': 'api' })).toEqual([c.id]);
    // Values are matched exactly (binary collation).
    expect(await ids({ 'metadata[team]': 'WEB' })).toEqual([]);
  });

  it('filters by ancestor and refuses an ancestor outside the team', async () => {
    const [root, child, grandchild] = mine();
    expect((await ids({ ancestor_run_id: root.id })).sort()).toEqual(
      [child.id, grandchild.id].sort(),
    );
    expect(await ids({ ancestor_run_id: child.id })).toEqual([grandchild.id]);
    const otherTeamRun = runs.find((r) => r.teamId === OTHER_TEAM)!;
    for (const ancestor of [otherTeamRun.id, randomUUID(), 'not-a-run']) {
      const error = await query
        .list(TEAM, params({ ancestor_run_id: ancestor }))
        .catch((err: unknown) => err);
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).status).toBe(404);
      expect((error as ApiError).detail).toBe('ancestor run not found');
    }
  });

  it('filters by artifact type', async () => {
    const [, second, third] = mine();
    expect((await ids({ artifact_type: 'PULL_REQUEST' })).sort()).toEqual(
      [second.id, third.id].sort(),
    );
    expect(await ids({ artifact_type: 'PLAN' })).toEqual([third.id]);
    expect(await ids({ artifact_type: 'SCREENSHOT' })).toEqual([]);
  });

  it('searches title, prompt and skill by word prefixes', async () => {
    expect((await ids({ q: 'deploy' })).sort()).toEqual(idsWhere((r) => r.title === 'deploy api'));
    expect((await ids({ q: 'depl frontend' })).sort()).toEqual(
      idsWhere((r) => r.title === 'deploy api' && r.prompt.includes('frontend')),
    );
    expect((await ids({ q: 'zed' })).sort()).toEqual(
      idsWhere((r) => r.skillSpec === 'acme/web:zed'),
    );
    expect((await ids({ q: '+deploy -api "x' })).sort()).toEqual(
      idsWhere((r) => r.title === 'deploy api'),
    );
    expect(await ids({ q: 'nothing-matches-this' })).toEqual([]);
    expect(await ids({ q: 'a b' })).toEqual([]);
  });

  it('finds a run by its id or URL, and only in the team', async () => {
    const target = mine()[5];
    expect(await ids({ q: target.id })).toEqual([target.id]);
    expect(await ids({ q: target.id.toUpperCase() })).toEqual([target.id]);
    expect(await ids({ q: `https://oz.example.com/runs/${target.id}` })).toEqual([target.id]);
    const otherTeamRun = runs.find((r) => r.teamId === OTHER_TEAM)!;
    expect(await ids({ q: otherTeamRun.id })).toEqual([]);
  });

  it('pages a filtered search and refuses its cursor with other filters', async () => {
    const raw = { q: 'item', state: ['SUCCEEDED', 'FAILED'], sort_by: 'created_at' };
    const all = await allPages(raw, 2);
    expect([...all].sort()).toEqual(idsWhere((r) => ['SUCCEEDED', 'FAILED'].includes(r.state)));
    const first = await query.list(TEAM, params({ ...raw, limit: '2' }));
    const error = await query
      .list(TEAM, params({ ...raw, state: 'FAILED', cursor: first.nextCursor }))
      .catch((err: unknown) => err);
    expect((error as ApiError).detail).toBe('cursor: does not match the filters it was issued for');
  });

  it('forces an index (never a table scan) on the page query', async () => {
    const spy = jest.spyOn(dataSource, 'query');
    await query.list(TEAM, params({ state: 'FAILED', sort_by: 'created_at', limit: '2' }));
    const pageSql = spy.mock.calls.map(([sql]) => sql).find((sql) => sql.includes('ORDER BY'));
    spy.mockRestore();
    expect(pageSql).toMatch(/FROM runs r FORCE INDEX \(.*`idx_runs_team_state_created`.*\)/);
  });

  it("reads a page's runs with their ids in one statement (a deferred join)", async () => {
    await query.list(TEAM, params({ limit: '1' })); // the index names, read once
    const spy = jest.spyOn(dataSource, 'query');
    const page = await query.list(TEAM, params({ sort_by: 'created_at', limit: '5' }));
    const statements = spy.mock.calls.map(([sql]) => sql);
    spy.mockRestore();
    expect(statements).toHaveLength(1);
    expect(page.runs.map((run) => run.id)).toEqual(
      expectedOrder((r) => r.createdAt.getTime(), 'desc').slice(0, 5),
    );
    expect(page.runs.every((run) => run instanceof Run && run.teamId === TEAM)).toBe(true);
  });

  it('pages by agent through skills equal in their first 1024 bytes of collation weights', async () => {
    // Each ß weighs two collation characters: a sort of the rows by value (a filesort, whose keys
    // stop at max_sort_length) would see these two as equal and order them by id alone.
    const team = 'TeamCCCCCCCCCCCCCCCCCC';
    const long = (last: string) => `acme/${'ß'.repeat(400)}${last}`;
    const made = [long('b'), long('a'), 'acme/a:short'].map((skill, i) => ({
      ...seeds()[0],
      id: `${'0'.repeat(35)}${i}`,
      teamId: team,
      skillSpec: skill,
    }));
    await seedRuns(dataSource, made, 'c');
    for (const order of ['asc', 'desc'] as const) {
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 10; page++) {
        const raw = { sort_by: 'agent', sort_order: order, limit: '1', cursor };
        const result = await query.list(team, params(raw));
        seen.push(...result.runs.map((run) => run.skillSpec!));
        if (!result.nextCursor) break;
        cursor = result.nextCursor;
      }
      const expected = [long('b'), long('a'), 'acme/a:short'].sort();
      expect(seen).toEqual(order === 'asc' ? expected : expected.reverse());
    }
  });

  it('re-reads the index names when an index it forced has been dropped', async () => {
    const fresh = new RunListQuery(dataSource);
    await fresh.list(TEAM, params({ limit: '1' }));
    await dataSource.query('ALTER TABLE runs DROP INDEX idx_runs_team_name');
    try {
      expect((await fresh.list(TEAM, params({ limit: '2' }))).runs).toHaveLength(2);
    } finally {
      await dataSource.query('ALTER TABLE runs ADD KEY idx_runs_team_name (team_id, config_name)');
    }
  });
});

async function seedDatabase(dataSource: DataSource, runs: Seed[]): Promise<void> {
  await seedRuns(
    dataSource,
    runs.filter((r) => r.teamId === TEAM),
    'a',
  );
  await seedRuns(
    dataSource,
    runs.filter((r) => r.teamId === OTHER_TEAM),
    'b',
  );
  const [a, b, c] = runs.filter((r) => r.teamId === TEAM);
  const metadata: [Seed, string, string][] = [
    [a, 'team', 'web'],
    [a, 'env', 'prod'],
    [b, 'team', 'web'],
    [b, 'env', 'dev'],
    [c, 'team', 'api'],
  ];
  for (const [run, key, value] of metadata) {
    await dataSource.query(
      'INSERT INTO run_metadata (run_id, team_id, meta_key, meta_value) VALUES (?, ?, ?, ?)',
      [run.id, run.teamId, key, value],
    );
  }
  for (const [ancestor, run] of [
    [a, b],
    [a, c],
    [b, c],
  ]) {
    await dataSource.query('INSERT INTO run_ancestors (ancestor_id, run_id) VALUES (?, ?)', [
      ancestor.id,
      run.id,
    ]);
  }
  const artifacts: [Seed, string][] = [
    [b, 'PULL_REQUEST'],
    [c, 'PULL_REQUEST'],
    [c, 'PULL_REQUEST'],
    [c, 'PLAN'],
  ];
  for (const [i, [run, type]] of artifacts.entries()) {
    await dataSource.query(
      `INSERT INTO run_artifacts (id, run_id, team_id, artifact_type, data, created_at)
       VALUES (?, ?, ?, ?, '{}', ?)`,
      [`Artifact${String(i).padStart(14, '0')}`, run.id, run.teamId, type, new Date()],
    );
  }
}

/** The runs of one team, and the team (named `name`). */
async function seedRuns(dataSource: DataSource, runs: Seed[], name: string): Promise<void> {
  await dataSource.query(`INSERT INTO teams (id, name, created_at) VALUES (?, ?, ?)`, [
    runs[0].teamId,
    name,
    new Date(),
  ]);
  // One statement per row, outside any transaction: InnoDB FULLTEXT only sees committed rows.
  for (const r of runs) {
    await dataSource.query(
      `INSERT INTO runs (id, team_id, title, prompt, state, source, config, skill_spec,
         environment_id, root_run_id, conversation_id, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, '{}', ?, ?, ?, ?, ?, ?)`,
      [
        r.id,
        r.teamId,
        r.title,
        r.prompt,
        r.state,
        r.source,
        r.skillSpec,
        r.environmentId,
        r.id,
        r.id,
        r.createdAt,
        r.updatedAt,
      ],
    );
  }
}
