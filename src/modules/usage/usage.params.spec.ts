import { ApiError } from '../../common/errors/api-error';
import { MAX_USAGE_RANGE_DAYS, parseUsageParams, startOfUtcMonth } from './usage.params';

const NOW = new Date('2026-03-17T09:30:00.000Z');

function refusal(raw: Record<string, unknown>): string {
  try {
    parseUsageParams(raw, NOW);
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(400);
    return (error as ApiError).detail ?? '';
  }
  throw new Error(`accepted ${JSON.stringify(raw)}`);
}

describe('usage query parameters', () => {
  it('defaults to the current UTC calendar month up to now, by day', () => {
    expect(parseUsageParams({}, NOW)).toEqual({
      from: new Date('2026-03-01T00:00:00.000Z'),
      to: NOW,
      groupBy: 'day',
    });
  });

  it('starts the month in UTC whatever the offset the bound was written with', () => {
    expect(startOfUtcMonth(new Date('2026-04-01T01:00:00+02:00'))).toEqual(
      new Date('2026-03-01T00:00:00.000Z'),
    );
    const { from } = parseUsageParams({ to: '2026-01-05T00:00:00Z' }, NOW);
    expect(from).toEqual(new Date('2026-01-01T00:00:00.000Z'));
  });

  it('takes explicit bounds and every grouping', () => {
    for (const groupBy of ['day', 'model', 'identity', 'source', 'creator']) {
      const params = parseUsageParams(
        { from: '2026-02-01T00:00:00Z', to: '2026-02-10T12:00:00+01:00', group_by: groupBy },
        NOW,
      );
      expect(params).toEqual({
        from: new Date('2026-02-01T00:00:00.000Z'),
        to: new Date('2026-02-10T11:00:00.000Z'),
        groupBy,
      });
    }
  });

  it('accepts an empty range and exactly the longest one', () => {
    const at = '2026-02-01T00:00:00Z';
    expect(parseUsageParams({ from: at, to: at }, NOW).from).toEqual(new Date(at));
    const to = new Date(Date.parse(at) + MAX_USAGE_RANGE_DAYS * 86_400_000).toISOString();
    expect(parseUsageParams({ from: at, to }, NOW).to).toEqual(new Date(to));
  });

  it('refuses what it cannot use, naming the parameter', () => {
    expect(refusal({ from: 'yesterday' })).toMatch(/^from: must be an RFC 3339 timestamp/);
    expect(refusal({ to: '2026-13-01T00:00:00Z' })).toMatch(/^to: must be an RFC 3339 timestamp/);
    expect(refusal({ group_by: 'week' })).toBe(
      'group_by: must be one of day, model, identity, source, creator (got "week")',
    );
    expect(refusal({ group_by: ['day', 'model'] })).toBe('group_by: must be given at most once');
    expect(refusal({ from: '2026-03-18T00:00:00Z' })).toMatch(/^from: must not be later than to/);
    expect(refusal({ from: '2026-02-02T00:00:00Z', to: '2026-02-01T00:00:00Z' })).toMatch(
      /^from: must not be later than to \(2026-02-01T00:00:00.000Z\)/,
    );
    expect(refusal({ from: '2025-01-01T00:00:00Z', to: '2026-02-06T00:00:01Z' })).toMatch(
      /^to: the range .* is longer than 400 days/,
    );
  });
});
