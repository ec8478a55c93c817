import { ApiError } from '../../common/errors/api-error';
import {
  decodeRunCursor,
  encodeRunCursor,
  runCursorPosition,
  runListFilterHash,
} from './run-list.cursor';
import { parseRunListParams, RunListParams } from './run-list.params';
import { buildRunSearch } from './run-list.search';
import { buildRunPageQuery, RUN_PAGE_SEGMENTS } from './run-list.sql';

const parse = (raw: Record<string, unknown>, metadataFilterEnabled = true) =>
  parseRunListParams(raw, { metadataFilterEnabled });

/** The ApiError thrown by `fn`, so that a test can check its code and which field it names. */
function errorOf(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected an ApiError');
}

describe('parseRunListParams', () => {
  it('applies the documented defaults', () => {
    expect(parse({})).toEqual({ limit: 20, sortBy: 'updated_at', sortOrder: 'desc' });
  });

  it('reads every documented parameter', () => {
    const params = parse({
      limit: '500',
      cursor: 'abc',
      sort_by: 'agent',
      sort_order: 'asc',
      state: ['QUEUED', 'FAILED'],
      source: 'API',
      execution_location: 'LOCAL',
      name: 'deployer',
      model_id: 'auto',
      creator: 'UserAAAAAAAAAAAAAAAAAA',
      executor: 'UserBBBBBBBBBBBBBBBBBB',
      created_after: '2026-01-01T00:00:00Z',
      created_before: '2026-02-01T00:00:00.250+01:00',
      updated_after: '2026-01-15T12:30:00.5Z',
      environment_id: 'EnvAAAAAAAAAAAAAAAAAAA',
      skill: 'acme/ops:audit',
      schedule_id: 'sched-1',
      ancestor_run_id: '6f1c2d3e-0000-4000-8000-000000000001',
      artifact_type: 'PULL_REQUEST',
      q: '  flaky tests ',
      'metadata[ticket_id]': 'VIS-238',
    });
    expect(params).toEqual({
      limit: 500,
      cursor: 'abc',
      sortBy: 'agent',
      sortOrder: 'asc',
      states: ['QUEUED', 'FAILED'],
      sources: ['API'],
      executionLocation: 'LOCAL',
      name: 'deployer',
      modelId: 'auto',
      creator: 'UserAAAAAAAAAAAAAAAAAA',
      executor: 'UserBBBBBBBBBBBBBBBBBB',
      createdAfter: new Date('2026-01-01T00:00:00.000Z'),
      createdBefore: new Date('2026-01-31T23:00:00.250Z'),
      updatedAfter: new Date('2026-01-15T12:30:00.500Z'),
      environmentId: 'EnvAAAAAAAAAAAAAAAAAAA',
      skillSpec: 'acme/ops:audit',
      scheduleId: 'sched-1',
      ancestorRunId: '6f1c2d3e-0000-4000-8000-000000000001',
      artifactType: 'PULL_REQUEST',
      q: 'flaky tests',
      metadata: { ticket_id: 'VIS-238' },
    });
  });

  it('takes a single state or source as a one-element list and drops repeats', () => {
    expect(parse({ state: 'QUEUED' }).states).toEqual(['QUEUED']);
    expect(parse({ source: ['API', 'SLACK', 'API'] }).sources).toEqual(['API', 'SLACK']);
  });

  it('treats empty values as not given', () => {
    expect(parse({ cursor: '', limit: '', q: '   ', state: '' })).toEqual(parse({}));
  });

  it('accepts empty-environment and skill equal to skill_spec', () => {
    expect(parse({ environment_id: 'empty-environment' }).environmentId).toBe('empty-environment');
    expect(parse({ skill: 'a/b:c', skill_spec: 'a/b:c' }).skillSpec).toBe('a/b:c');
  });

  it('ignores unknown and newer parameters', () => {
    expect(
      parse({
        factory_uid: ['f1', 'f2'],
        factory_only: 'true',
        task_status: 'running',
        automation_id: 'x',
        whatever: { nested: 'object' },
      }),
    ).toEqual(parse({}));
  });

  it('rounds sub-millisecond bounds so that the strict comparison keeps its meaning', () => {
    const params = parse({
      created_after: '2026-01-01T00:00:00.123999Z',
      created_before: '2026-01-01T00:00:00.123001Z',
    });
    expect(params.createdAfter?.toISOString()).toBe('2026-01-01T00:00:00.123Z');
    expect(params.createdBefore?.toISOString()).toBe('2026-01-01T00:00:00.124Z');
    expect(parse({ created_before: '2026-01-01T00:00:00.123000Z' }).createdBefore).toEqual(
      new Date('2026-01-01T00:00:00.123Z'),
    );
  });

  it.each<[string, Record<string, unknown>, RegExp]>([
    ['limit', { limit: '0' }, /^limit: must be an integer from 1 to 500$/],
    ['limit', { limit: '501' }, /^limit:/],
    ['limit', { limit: '2.5' }, /^limit:/],
    ['limit', { limit: 'ten' }, /^limit:/],
    ['limit', { limit: '-1' }, /^limit:/],
    ['limit', { limit: ['1', '2'] }, /^limit: must be given at most once$/],
    ['cursor', { cursor: ['a', 'b'] }, /^cursor:/],
    [
      'sort_by',
      { sort_by: 'colour' },
      /^sort_by: must be one of updated_at, created_at, title, agent/,
    ],
    ['sort_by', { sort_by: ['title', 'agent'] }, /^sort_by:/],
    ['sort_order', { sort_order: 'DESC' }, /^sort_order: must be one of desc, asc/],
    ['state', { state: ['QUEUED', 'DONE'] }, /^state: must be one of QUEUED, PENDING, .*"DONE"/],
    ['source', { source: 'EMAIL' }, /^source: must be one of LINEAR, API/],
    ['execution_location', { execution_location: 'MARS' }, /^execution_location: .*LOCAL, REMOTE/],
    ['created_after', { created_after: 'yesterday' }, /^created_after: must be an RFC 3339/],
    ['created_before', { created_before: '2026-13-01T00:00:00Z' }, /^created_before:/],
    ['updated_after', { updated_after: '2026-01-01' }, /^updated_after:/],
    ['environment_id', { environment_id: 'abc' }, /^environment_id: .*empty-environment/],
    ['environment_id', { environment_id: 'EnvAAAAAAAAAAAAAAAAAA-' }, /^environment_id:/],
    ['artifact_type', { artifact_type: 'VIDEO' }, /^artifact_type: must be one of PLAN, PULL/],
    ['skill', { skill: 'a/b:c', skill_spec: 'a/b:d' }, /^skill: .*skill_spec/],
    ['q', { q: 'x'.repeat(257) }, /^q: must be at most 256 characters$/],
    ['name', { name: 'n'.repeat(1025) }, /^name:/],
    ['model_id', { model_id: { nested: 'x' } }, /^model_id: must be a plain string value$/],
    ['creator', { creator: ['a', 'b'] }, /^creator:/],
    ['executor', { executor: ['a', 'b'] }, /^executor:/],
    ['schedule_id', { schedule_id: ['a', 'b'] }, /^schedule_id:/],
    ['ancestor_run_id', { ancestor_run_id: ['a', 'b'] }, /^ancestor_run_id:/],
  ])('refuses a bad %s with invalid_request naming it', (_name, raw, detail) => {
    const error = errorOf(() => parse(raw));
    expect(error.code).toBe('invalid_request');
    expect(error.status).toBe(400);
    expect(error.detail).toMatch(detail);
  });

  it('accepts a q of exactly 256 characters, counted by code point', () => {
    expect(parse({ q: 'x'.repeat(256) }).q).toHaveLength(256);
    expect(parse({ q: '😀'.repeat(256) }).q).toBe('😀'.repeat(256));
  });

  describe('metadata', () => {
    it('reads bracket keys from the simple query parser', () => {
      expect(
        parse({ 'metadata[ticket_id]': 'VIS-238', 'metadata[env.name]': 'prod' }).metadata,
      ).toEqual({ ticket_id: 'VIS-238', 'env.name': 'prod' });
    });

    it('reads a nested object from the extended query parser', () => {
      expect(parse({ metadata: { ticket_id: 'VIS-238' } }).metadata).toEqual({
        ticket_id: 'VIS-238',
      });
    });

    it('allows an empty value and up to 5 pairs', () => {
      const raw = Object.fromEntries(['a', 'b', 'c', 'd', 'e'].map((k) => [`metadata[${k}]`, '']));
      expect(Object.keys(parse(raw).metadata ?? {})).toHaveLength(5);
    });

    it.each<[string, Record<string, unknown>, RegExp]>([
      [
        'more than 5 pairs',
        Object.fromEntries(['a', 'b', 'c', 'd', 'e', 'f'].map((k) => [`metadata[${k}]`, '1'])),
        /^metadata: at most 5 pairs/,
      ],
      ['a key with a space', { 'metadata[bad key]': '1' }, /^metadata: key "bad key" must be 1-64/],
      ['an empty key', { 'metadata[]': '1' }, /^metadata: key "" must be/],
      ['a 65-byte key', { [`metadata[${'k'.repeat(65)}]`]: '1' }, /^metadata: key/],
      [
        'a 257-byte value',
        { 'metadata[k]': 'é'.repeat(129) },
        /^metadata\[k\]: must be at most 256 bytes/,
      ],
      ['a NUL in the value', { 'metadata[k]': 'a\0b' }, /^metadata\[k\]:.*NUL/],
      [
        'a repeated key',
        { 'metadata[k]': ['1', '2'] },
        /^metadata\[k\]: must be given at most once$/,
      ],
      [
        'a plain metadata value',
        { metadata: 'k=v' },
        /^metadata: must be given as metadata\[key\]=value$/,
      ],
      [
        'a nested value',
        { metadata: { k: { deeper: 'v' } } },
        /^metadata\[k\]: must be a plain string/,
      ],
    ])('refuses %s', (_case, raw, detail) => {
      const error = errorOf(() => parse(raw));
      expect(error.code).toBe('invalid_request');
      expect(error.detail).toMatch(detail);
    });

    it('accepts a value of exactly 256 bytes', () => {
      expect(parse({ 'metadata[k]': 'é'.repeat(128) }).metadata?.k).toHaveLength(128);
    });

    it('answers feature_not_available when metadata filtering is switched off', () => {
      const error = errorOf(() => parse({ 'metadata[ticket_id]': 'VIS-238' }, false));
      expect(error.code).toBe('feature_not_available');
      expect(error.status).toBe(403);
      expect(error.detail).toBe('metadata filtering is disabled on this server');
      expect(parse({ state: 'QUEUED' }, false).states).toEqual(['QUEUED']);
    });
  });
});

describe('run cursor codec', () => {
  const run = {
    id: '6f1c2d3e-0000-4000-8000-000000000001',
    createdAt: new Date('2026-01-01T10:00:00.123Z'),
    updatedAt: new Date('2026-01-02T11:22:33.999Z'),
    title: 'Fix the “login” page',
    skillSpec: null,
  };
  const base = parse({ sort_by: 'created_at', state: ['FAILED', 'QUEUED'] });
  const roundTrip = (params: RunListParams) =>
    decodeRunCursor(encodeRunCursor(params, runCursorPosition(params.sortBy, run)), params);

  it('round-trips timestamps with their milliseconds', () => {
    expect(roundTrip(base)).toEqual({ value: run.createdAt, id: run.id });
    const byUpdate = parse({ sort_order: 'asc' });
    expect(roundTrip(byUpdate)).toEqual({ value: run.updatedAt, id: run.id });
    expect((roundTrip(byUpdate).value as Date).getTime()).toBe(run.updatedAt.getTime());
  });

  it('round-trips titles and missing skills', () => {
    expect(roundTrip(parse({ sort_by: 'title' }))).toEqual({ value: run.title, id: run.id });
    expect(roundTrip(parse({ sort_by: 'agent' }))).toEqual({ value: null, id: run.id });
  });

  it('is opaque base64url', () => {
    expect(encodeRunCursor(base, runCursorPosition('created_at', run))).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it('accepts a different limit and the same filters in another order', () => {
    const cursor = encodeRunCursor(base, runCursorPosition('created_at', run));
    const same = parse({ sort_by: 'created_at', state: ['QUEUED', 'FAILED'], limit: '5' });
    expect(decodeRunCursor(cursor, { ...same, cursor })).toEqual({
      value: run.createdAt,
      id: run.id,
    });
    expect(runListFilterHash(parse({ skill: 'a/b:c' }))).toBe(
      runListFilterHash(parse({ skill_spec: 'a/b:c' })),
    );
  });

  it.each<[string, Record<string, unknown>]>([
    ['another filter', { sort_by: 'created_at', state: 'FAILED' }],
    ['an extra filter', { sort_by: 'created_at', state: ['FAILED', 'QUEUED'], q: 'x' }],
    ['another sort', { state: ['FAILED', 'QUEUED'] }],
    ['another order', { sort_by: 'created_at', sort_order: 'asc', state: ['FAILED', 'QUEUED'] }],
    ['other metadata', { sort_by: 'created_at', state: ['FAILED', 'QUEUED'], 'metadata[k]': 'v' }],
  ])('refuses a cursor replayed with %s', (_case, raw) => {
    const cursor = encodeRunCursor(base, runCursorPosition('created_at', run));
    const error = errorOf(() => decodeRunCursor(cursor, parse(raw)));
    expect(error.code).toBe('invalid_request');
    expect(error.detail).toBe('cursor: does not match the filters it was issued for');
  });

  const encoded = (payload: unknown) =>
    Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
  const good = { v: 1, s: 'created_at', o: 'desc', k: '2026-01-01T00:00:00.000Z', i: 'abc' };

  it.each<[string, string]>([
    ['not base64url', 'abc$%'],
    ['not JSON', Buffer.from('{oops').toString('base64url')],
    ['JSON null', encoded(null)],
    ['another version', encoded({ ...good, v: 2, f: runListFilterHash(base) })],
    ['no id', encoded({ ...good, i: '', f: runListFilterHash(base) })],
    ['a bad timestamp', encoded({ ...good, k: 'yesterday', f: runListFilterHash(base) })],
    ['a null timestamp', encoded({ ...good, k: null, f: runListFilterHash(base) })],
    ['a numeric value', encoded({ ...good, k: 5, f: runListFilterHash(base) })],
    ['far too long', 'A'.repeat(5000)],
  ])('refuses a cursor that is %s as malformed', (_case, cursor) => {
    const error = errorOf(() => decodeRunCursor(cursor, base));
    expect(error.detail).toBe('cursor: is malformed');
  });
});

describe('buildRunSearch', () => {
  it('requires every indexable word as a prefix and drops operators, short words and stopwords', () => {
    expect(buildRunSearch('+Flaky -tests* "in" the CI (pipeline) ~x@y')).toEqual({
      runId: null,
      fullText: '+flaky* +tests* +pipeline*',
    });
  });

  it('recognises a run id, bare or as the last segment of a URL', () => {
    const id = '6F1C2D3E-0000-4000-8000-000000000001';
    expect(buildRunSearch(id).runId).toBe(id.toLowerCase());
    expect(buildRunSearch(`https://oz.example.com/runs/${id}`).runId).toBe(id.toLowerCase());
    expect(buildRunSearch(`https://oz.example.com/runs/${id}/`).runId).toBe(id.toLowerCase());
    expect(buildRunSearch('https://oz.example.com/runs/123').runId).toBeNull();
  });

  it('leaves nothing to search for when no word is usable', () => {
    expect(buildRunSearch('a b to of')).toEqual({ runId: null, fullText: null });
  });
});

describe('buildRunPageQuery', () => {
  const teamId = 'TeamAAAAAAAAAAAAAAAAAA';

  it('filters, orders and limits with placeholders only', () => {
    const params = parse({
      sort_by: 'created_at',
      state: ['FAILED', 'QUEUED'],
      created_after: '2026-01-01T00:00:00Z',
      name: "x' OR 1=1 --",
      'metadata[k]': 'v',
    });
    const after = { value: new Date('2026-02-01T00:00:00.123Z'), id: 'run-9' };
    const { sql, params: values } = buildRunPageQuery({
      teamId,
      params,
      search: null,
      segment: RUN_PAGE_SEGMENTS.created_at[0],
      after,
      limit: 21,
    });
    expect(sql).not.toContain('OR 1=1');
    expect(sql).toContain('r.state IN (?, ?)');
    expect(sql).toContain('(r.created_at < ? OR (r.created_at = ? AND r.id < ?))');
    expect(sql).not.toMatch(/\(r\.created_at, r\.id\)/);
    expect(sql).toMatch(/ORDER BY r\.created_at DESC, r\.id DESC LIMIT \?$/);
    expect(values).toEqual([
      teamId,
      'FAILED',
      'QUEUED',
      "x' OR 1=1 --",
      params.createdAfter,
      teamId,
      'k',
      'v',
      after.value,
      after.value,
      'run-9',
      21,
    ]);
  });

  it('pages the runs without a skill by id alone, in the requested direction', () => {
    const { sql, params } = buildRunPageQuery({
      teamId,
      params: parse({ sort_by: 'agent', sort_order: 'asc' }),
      search: null,
      segment: RUN_PAGE_SEGMENTS.agent[1],
      after: { value: null, id: 'run-3' },
      limit: 5,
      indexHint: ' FORCE INDEX (`PRIMARY`)',
    });
    expect(sql).toBe(
      'SELECT r.id AS id, r.skill_spec AS sort_value FROM runs r FORCE INDEX (`PRIMARY`) ' +
        'WHERE r.team_id = ? AND r.skill_spec IS NULL AND r.id > ? ORDER BY r.id ASC LIMIT ?',
    );
    expect(params).toEqual([teamId, 'run-3', 5]);
  });

  it('joins the union of the id and the full text when q names a run', () => {
    const { sql, params } = buildRunPageQuery({
      teamId,
      params: parse({ q: '6f1c2d3e-0000-4000-8000-000000000001' }),
      search: buildRunSearch('6f1c2d3e-0000-4000-8000-000000000001'),
      segment: RUN_PAGE_SEGMENTS.updated_at[0],
      after: null,
      limit: 21,
    });
    expect(sql).toContain(
      'JOIN (SELECT rs.id FROM runs rs WHERE rs.id = ? UNION SELECT rf.id FROM runs rf WHERE ' +
        'MATCH(rf.title, rf.prompt, rf.skill_spec) AGAINST (? IN BOOLEAN MODE)) hit ON hit.id = r.id',
    );
    expect(sql).not.toMatch(/LIKE/i);
    expect(params[0]).toBe('6f1c2d3e-0000-4000-8000-000000000001');
    expect(params[2]).toBe(teamId);
  });
});
