import type { RunLimits } from '../limits';
import { budgetRefusal, limitsBudget, monthStartUtc } from './budget-limits';

const row = (
  fields: Partial<Pick<RunLimits, 'monthlyBudgetUsd' | 'maxRunCostUsd'>>,
  agentUid = '',
): RunLimits => ({
  teamId: 'team',
  agentUid,
  maxConcurrentRuns: null,
  monthlyBudgetUsd: fields.monthlyBudgetUsd ?? null,
  maxRunCostUsd: fields.maxRunCostUsd ?? null,
  updatedAt: new Date(),
});

describe('budgetRefusal', () => {
  it('refuses once the run reaches the lower of the team and agent cost caps', () => {
    const limits = { team: row({ maxRunCostUsd: 2 }), agent: row({ maxRunCostUsd: 0.5 }, 'a') };
    expect(budgetRefusal(limits, { run: 0.49, team: 0.49, agent: 0.49 })).toBeNull();
    expect(budgetRefusal(limits, { run: 0.5, team: 0.5, agent: 0.5 })).toBe(
      "the run's cost ($0.5) reached the agent's max_run_cost_usd limit of $0.5",
    );
  });

  it('lets a run ask for a lower cap of its own, never a higher one', () => {
    const limits = { team: row({ maxRunCostUsd: 1 }), agent: null };
    expect(budgetRefusal(limits, { run: 0.3, team: 0.3, agent: 0 }, 0.25)).toBe(
      "the run's cost ($0.3) reached the run's own max_cost_usd limit of $0.25",
    );
    expect(budgetRefusal(limits, { run: 1, team: 1, agent: 0 }, 50)).toContain(
      "the team's max_run_cost_usd",
    );
    expect(budgetRefusal({ team: null, agent: null }, { run: 2, team: 2, agent: 0 }, 2)).toContain(
      'max_cost_usd',
    );
    expect(limitsBudget({ team: null, agent: null }, 0.5)).toBe(true);
  });

  it("refuses once the team's month is spent, naming monthly_budget_usd", () => {
    const limits = { team: row({ monthlyBudgetUsd: 10 }), agent: null };
    expect(budgetRefusal(limits, { run: 0, team: 9.999999, agent: 0 })).toBeNull();
    expect(budgetRefusal(limits, { run: 0, team: 10.25, agent: 0 })).toBe(
      "the team's spend this month ($10.25) reached its monthly_budget_usd limit of $10",
    );
  });

  it("refuses once the agent's own month is spent, the team's budget left", () => {
    const limits = {
      team: row({ monthlyBudgetUsd: 100 }),
      agent: row({ monthlyBudgetUsd: 1 }, 'a'),
    };
    expect(budgetRefusal(limits, { run: 0.2, team: 5, agent: 1.2 })).toContain(
      "the agent's spend this month ($1.2)",
    );
  });

  it('allows nothing at a budget of 0 and everything without limits', () => {
    expect(
      budgetRefusal(
        { team: row({ monthlyBudgetUsd: 0 }), agent: null },
        { run: 0, team: 0, agent: 0 },
      ),
    ).toContain('monthly_budget_usd');
    expect(
      budgetRefusal({ team: null, agent: null }, { run: 1e9, team: 1e9, agent: 1e9 }),
    ).toBeNull();
    expect(limitsBudget({ team: null, agent: null })).toBe(false);
    expect(limitsBudget({ team: row({}), agent: row({ maxRunCostUsd: 1 }, 'a') })).toBe(true);
  });
});

describe('monthStartUtc', () => {
  it('is midnight UTC of the first day, whatever the local time zone says', () => {
    expect(monthStartUtc(new Date('2026-03-01T00:30:00+02:00')).toISOString()).toBe(
      '2026-02-01T00:00:00.000Z',
    );
    expect(monthStartUtc(new Date('2026-12-31T23:59:59.999Z')).toISOString()).toBe(
      '2026-12-01T00:00:00.000Z',
    );
  });
});
