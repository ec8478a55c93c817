import type { AuditBy } from '../audit';
import type { IdempotencyClaim } from '../idempotency';
import type { Run } from './entities/run.entity';
import type { AgentConfig, ScheduleInfo } from '../run-config';
import type { RunSource } from './run-state';

/** What any producer of runs (API, schedules, webhooks …) asks the run creator for. */
export interface NewRun {
  teamId: string;
  creatorId: string | null;
  /** False when the caller is known to be a person, which spares the agent-identity lookup. */
  creatorMayBeAgent?: boolean;
  executorId?: string | null;
  source: RunSource;
  prompt?: string;
  title?: string;
  skill?: string;
  config?: AgentConfig;
  metadata?: Record<string, string>;
  parentRunId?: string;
  conversationId?: string;
  mode?: string;
  interactive?: boolean;
  /** The run's own cost cap (USD); the team's and agent's `max_run_cost_usd` still apply. */
  maxCostUsd?: number;
  attachments?: { fileName: string; mimeType: string; data: Buffer }[];
  scheduleInfo?: ScheduleInfo;
  agentIdentityUid?: string;
  /**
   * Chosen in advance by a producer that must create a run exactly once (a schedule firing
   * records it first): creating a second run with the same id fails on the primary key.
   */
  runId?: string;
  /**
   * The `Idempotency-Key` of the request asking for the run: its answer (`status`, `body` of the
   * created run) is recorded in the transaction that commits the run, so a retry with the key
   * finds either both or neither.
   */
  idempotency?: { claim: IdempotencyClaim; status: number; body: (run: Run) => unknown };
  /** Who asked through the API: a `run.create` audit event commits with the run. */
  auditBy?: AuditBy;
}
