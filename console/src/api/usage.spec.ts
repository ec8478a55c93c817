import { costPerDay, dayRangeQuery, monthStart, runCostUsd, totals } from './usage';

const bucket = (key: string | null, runs: number, cost: number) => ({
  key,
  name: null,
  runs,
  prompt_tokens: runs * 10,
  completion_tokens: runs * 5,
  cost_usd: cost,
});

describe('console usage helpers', () => {
  it('asks for whole UTC days, the last one included', () => {
    expect(dayRangeQuery('2026-02-01', '2026-02-28')).toEqual({
      from: '2026-02-01T00:00:00.000Z',
      to: '2026-03-01T00:00:00.000Z',
    });
    expect(monthStart(new Date('2026-03-31T23:30:00Z'))).toBe('2026-03-01');
  });

  it('charts every day of the range, days without runs at zero', () => {
    const days = costPerDay('2026-02-27T00:00:00.000Z', '2026-03-02T00:00:00.000Z', [
      bucket('2026-02-28', 2, 0.5),
      bucket('2026-03-01', 1, 0.25),
    ]);
    expect(days).toEqual([
      { day: '2026-02-27', cost: 0 },
      { day: '2026-02-28', cost: 0.5 },
      { day: '2026-03-01', cost: 0.25 },
    ]);
  });

  it('adds buckets up and prices a run as inference plus compute', () => {
    expect(totals([bucket('a', 2, 0.5), bucket(null, 1, 0.25)])).toEqual({
      runs: 3,
      promptTokens: 30,
      completionTokens: 15,
      costUsd: 0.75,
    });
    expect(runCostUsd({ inference_cost_usd: 0.002, compute_cost_usd: 0.001 })).toBeCloseTo(0.003);
    expect(runCostUsd(undefined)).toBeUndefined();
  });
});
