import type { Run } from './entities/run.entity';
import { isTerminal, RunState } from './run-state';

/** What a run's start and end lines are made from (read after the transition). */
export type LoggedRun = Pick<
  Run,
  | 'id'
  | 'teamId'
  | 'modelId'
  | 'executionCount'
  | 'statusMessage'
  | 'requestUsage'
  | 'createdAt'
  | 'startedAt'
  | 'updatedAt'
>;

/** Whether entering `to` writes an info line (a run's start and its end). */
export function isLoggedTransition(to: RunState): boolean {
  return to === 'INPROGRESS' || isTerminal(to);
}

/**
 * The info line of a run entering `to`: `run started` (team, model, execution) or `run ended`
 * (state, duration from start, or from creation when it never started, and cost; the error code
 * and message of a FAILED or ERROR run). Null for the states in between.
 */
export function runLogLine(to: RunState, run: LoggedRun): Record<string, unknown> | null {
  const ids = { run_id: run.id, team_id: run.teamId };
  if (to === 'INPROGRESS') {
    return {
      msg: 'run started',
      ...ids,
      model: run.modelId,
      execution_id: run.executionCount,
    };
  }
  if (!isTerminal(to)) return null;
  const usage = run.requestUsage;
  const cost = (usage?.inference_cost_usd ?? 0) + (usage?.compute_cost_usd ?? 0);
  const failed = to === 'FAILED' || to === 'ERROR';
  return {
    msg: 'run ended',
    ...ids,
    state: to,
    model: run.modelId,
    duration_ms: run.updatedAt.getTime() - (run.startedAt ?? run.createdAt).getTime(),
    cost_usd: Math.round(cost * 1e6) / 1e6,
    ...(failed
      ? {
          error_code: run.statusMessage?.error_code ?? null,
          status_message: run.statusMessage?.message ?? null,
        }
      : {}),
  };
}
