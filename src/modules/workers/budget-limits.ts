import type { RunLimitRows } from '../limits';

/** What has been spent, in USD at the model catalogue's prices. */
export interface Spend {
  /** The run itself, this execution included. */
  run: number;
  /** The team this calendar month (UTC), the run included. */
  team: number;
  /** The run's agent identity this month, the run included (0 without one). */
  agent: number;
}

export function limitsBudget(limits: RunLimitRows, runCap: number | null = null): boolean {
  return (
    runCap !== null ||
    [limits.team, limits.agent].some(
      (row) => (row?.monthlyBudgetUsd ?? null) !== null || (row?.maxRunCostUsd ?? null) !== null,
    )
  );
}

const usd = (n: number) => `$${n.toFixed(6).replace(/\.?0+$/, '')}`;

/**
 * Why the run may not make another model call, or null. A limit is reached once the spend is at
 * or above it (a budget of 0 allows nothing). The run's cost cap is the lower of its team's and
 * its agent's `max_run_cost_usd` and the run's own `max_cost_usd`.
 */
export function budgetRefusal(
  limits: RunLimitRows,
  spend: Spend,
  /** The run's own cap (`max_cost_usd` at creation), which may only lower the limits'. */
  runCap: number | null = null,
): string | null {
  const caps = [
    { name: "the team's max_run_cost_usd", max: limits.team?.maxRunCostUsd ?? null },
    { name: "the agent's max_run_cost_usd", max: limits.agent?.maxRunCostUsd ?? null },
    { name: "the run's own max_cost_usd", max: runCap },
  ].filter((cap): cap is { name: string; max: number } => cap.max !== null);
  const cap = caps.sort((a, b) => a.max - b.max)[0];
  if (cap && spend.run >= cap.max) {
    return `the run's cost (${usd(spend.run)}) reached ${cap.name} limit of ${usd(cap.max)}`;
  }
  const teamBudget = limits.team?.monthlyBudgetUsd ?? null;
  if (teamBudget !== null && spend.team >= teamBudget) {
    return `the team's spend this month (${usd(spend.team)}) reached its monthly_budget_usd limit of ${usd(teamBudget)}`;
  }
  const agentBudget = limits.agent?.monthlyBudgetUsd ?? null;
  if (agentBudget !== null && spend.agent >= agentBudget) {
    return `the agent's spend this month (${usd(spend.agent)}) reached its monthly_budget_usd limit of ${usd(agentBudget)}`;
  }
  return null;
}

/** The first instant of `now`'s calendar month, UTC. */
export function monthStartUtc(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}
