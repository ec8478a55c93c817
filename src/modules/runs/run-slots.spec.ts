import type { RunLimits } from '../limits';
import { fullLimit, limitsConcurrency, runsToStart, WaitingRun } from './run-slots';

const row = (maxConcurrentRuns: number | null, agentUid = ''): RunLimits => ({
  teamId: 'team',
  agentUid,
  maxConcurrentRuns,
  monthlyBudgetUsd: null,
  maxRunCostUsd: null,
  updatedAt: new Date(),
});

describe('fullLimit', () => {
  it('names the team when its runs fill its limit, whatever the agent has left', () => {
    const limits = { team: row(3), agent: row(10, 'agent') };
    expect(fullLimit(limits, { team: 2, agent: 0 })).toBeNull();
    expect(fullLimit(limits, { team: 3, agent: 0 })).toBe('team');
    expect(fullLimit(limits, { team: 4, agent: 0 })).toBe('team');
  });

  it("names the agent when the agent's own limit is full and the team's is not", () => {
    const limits = { team: row(null), agent: row(1, 'agent') };
    expect(fullLimit(limits, { team: 7, agent: 0 })).toBeNull();
    expect(fullLimit(limits, { team: 7, agent: 1 })).toBe('agent');
  });

  it('treats a limit of 0 as no slot at all, and no rows as no limit', () => {
    expect(fullLimit({ team: row(0), agent: null }, { team: 0, agent: 0 })).toBe('team');
    expect(fullLimit({ team: null, agent: null }, { team: 1000, agent: 1000 })).toBeNull();
    expect(limitsConcurrency({ team: null, agent: null })).toBe(false);
    expect(limitsConcurrency({ team: row(null), agent: row(2, 'a') })).toBe(true);
  });
});

describe('runsToStart', () => {
  const waiting = (id: string, executorId: string | null, atCapacity = true): WaitingRun => ({
    id,
    executorId,
    atCapacity,
  });

  it('starts the oldest waiting runs that fit in the free slots, in order', () => {
    const runs = [waiting('a', 'u'), waiting('b', 'u'), waiting('c', 'u')];
    expect(runsToStart(runs, 3, new Map(), { team: 1, byAgent: new Map([['u', 1]]) })).toEqual([
      'a',
      'b',
    ]);
  });

  it('counts a queued run that already has a job as taking a slot, without dispatching it', () => {
    const runs = [waiting('queued', 'u', false), waiting('marked', 'u'), waiting('later', 'u')];
    expect(runsToStart(runs, 2, new Map(), { team: 0, byAgent: new Map() })).toEqual(['marked']);
  });

  it("skips runs of an agent at its limit and lets other agents' runs use the team's slots", () => {
    const runs = [waiting('x1', 'x'), waiting('x2', 'x'), waiting('y1', 'y')];
    const agentMax = new Map([['x', 1]]);
    expect(runsToStart(runs, 5, agentMax, { team: 1, byAgent: new Map([['x', 1]]) })).toEqual([
      'y1',
    ]);
  });

  it('starts every waiting run once the team has no limit', () => {
    const runs = [waiting('a', null), waiting('b', null)];
    expect(runsToStart(runs, null, new Map(), { team: 50, byAgent: new Map() })).toEqual([
      'a',
      'b',
    ]);
  });

  it('starts nothing while the team is full', () => {
    expect(
      runsToStart([waiting('a', null)], 2, new Map(), { team: 2, byAgent: new Map() }),
    ).toEqual([]);
  });
});
