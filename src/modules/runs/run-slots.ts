import type { RunLimitRows } from '../limits';

/** Runs counted against a concurrency limit: the team's, and the run's agent identity's. */
export interface SlotUse {
  team: number;
  agent: number;
}

/**
 * Which limit keeps a run from taking a slot, or null when it may: `use` is how many runs already
 * hold one (at a claim) or hold or wait for one (at creation).
 */
export function fullLimit(limits: RunLimitRows, use: SlotUse): 'team' | 'agent' | null {
  const teamMax = limits.team?.maxConcurrentRuns ?? null;
  if (teamMax !== null && use.team >= teamMax) return 'team';
  const agentMax = limits.agent?.maxConcurrentRuns ?? null;
  if (agentMax !== null && use.agent >= agentMax) return 'agent';
  return null;
}

export function limitsConcurrency(limits: RunLimitRows): boolean {
  return (
    (limits.team?.maxConcurrentRuns ?? null) !== null ||
    (limits.agent?.maxConcurrentRuns ?? null) !== null
  );
}

export interface WaitingRun {
  id: string;
  executorId: string | null;
  atCapacity: boolean;
}

/**
 * The waiting runs (oldest first) to start now: each takes a slot of the team and of its agent
 * while both have one. Runs without the `at_capacity` mark already have a job and take their slot
 * too (they will be claimed), but need no dispatch. A run whose agent is full is skipped, not
 * waited for: later runs of other agents may still fit.
 */
export function runsToStart(
  waiting: readonly WaitingRun[],
  teamMax: number | null,
  agentMax: ReadonlyMap<string, number>,
  running: { team: number; byAgent: Map<string, number> },
): string[] {
  let team = running.team;
  const byAgent = new Map(running.byAgent);
  const start: string[] = [];
  for (const run of waiting) {
    if (teamMax !== null && team >= teamMax) break;
    const agent = run.executorId ?? '';
    const max = agentMax.get(agent);
    const used = byAgent.get(agent) ?? 0;
    if (max !== undefined && used >= max) continue;
    team++;
    byAgent.set(agent, used + 1);
    if (run.atCapacity) start.push(run.id);
  }
  return start;
}
