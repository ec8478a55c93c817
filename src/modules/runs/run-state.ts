export const RUN_STATES = [
  'QUEUED',
  'PENDING',
  'CLAIMED',
  'INPROGRESS',
  'SUCCEEDED',
  'FAILED',
  'BLOCKED',
  'ERROR',
  'CANCELLED',
] as const;
export type RunState = (typeof RUN_STATES)[number];

export const TERMINAL_STATES: readonly RunState[] = [
  'SUCCEEDED',
  'FAILED',
  'BLOCKED',
  'ERROR',
  'CANCELLED',
];

/** The states a run ends in: the terminal ones but BLOCKED, which waits for a person's decision. */
export const ENDED_STATES: readonly RunState[] = TERMINAL_STATES.filter((s) => s !== 'BLOCKED');

export const ACTIVE_STATES: readonly RunState[] = ['QUEUED', 'PENDING', 'CLAIMED', 'INPROGRESS'];

export function isTerminal(state: RunState): boolean {
  return TERMINAL_STATES.includes(state);
}

export const RUN_SOURCES = [
  'LINEAR',
  'API',
  'MCP',
  'SLACK',
  'TEAMS',
  'LOCAL',
  'SCHEDULED_AGENT',
  'WEB_APP',
  'GITHUB_ACTION',
  'CLOUD_MODE',
  'CLI',
  'JIRA',
  'SELF_IMPROVEMENT',
  'GITHUB_WEBHOOK',
  'GITLAB_WEBHOOK',
  'AZURE_DEVOPS_WEBHOOK',
  'AUTOFIX',
  'RUN_SCORER',
  'ORCHESTRATION',
  'BENCHMARK_TRIAL',
  'CREATE_BENCHMARK_TASK',
  'CUSTOM_WEBHOOK',
] as const;
export type RunSource = (typeof RUN_SOURCES)[number];

/**
 * The run state machine, the single place that says which transition is allowed.
 * An ended run may go back to QUEUED only through a follow-up that starts a new execution
 * of the same run (`handoff_execution`); a crashed worker's claim goes back to QUEUED once.
 * CANCELLED is final: nothing, not even a follow-up, brings a cancelled run back.
 * BLOCKED ends an execution that waits for a person (an approval or a question): no sandbox is
 * held and the run takes no concurrency slot. A decision or a follow-up queues it again, a cancel
 * ends it, and the blocked timeout fails it (`approval_timeout`).
 */
const ALLOWED: Record<RunState, readonly RunState[]> = {
  QUEUED: ['PENDING', 'CLAIMED', 'CANCELLED', 'FAILED', 'ERROR'],
  PENDING: ['QUEUED', 'CLAIMED', 'FAILED', 'ERROR'],
  CLAIMED: ['QUEUED', 'INPROGRESS', 'CANCELLED', 'FAILED', 'ERROR'],
  INPROGRESS: ['QUEUED', 'SUCCEEDED', 'FAILED', 'ERROR', 'BLOCKED', 'CANCELLED'],
  SUCCEEDED: ['QUEUED'],
  FAILED: ['QUEUED'],
  ERROR: ['QUEUED'],
  BLOCKED: ['QUEUED', 'CANCELLED', 'FAILED'],
  CANCELLED: [],
};

export function canTransition(from: RunState, to: RunState): boolean {
  return ALLOWED[from].includes(to);
}

/** States from which `to` may be reached; used as the `WHERE state IN (...)` guard. */
export function statesLeadingTo(to: RunState): RunState[] {
  return RUN_STATES.filter((from) => canTransition(from, to));
}

/**
 * The timeline event each transition into a state records. Going back to QUEUED records none:
 * the next `oz_run_claimed` carries the execution id and why it started.
 */
export const EVENT_FOR_STATE: Partial<Record<RunState, string>> = {
  CLAIMED: 'oz_run_claimed',
  INPROGRESS: 'agent_started',
  SUCCEEDED: 'oz_run_done',
  FAILED: 'oz_run_failed',
  ERROR: 'oz_run_errored',
  BLOCKED: 'oz_run_blocked',
  CANCELLED: 'oz_run_cancelled',
};
