import type { AgentConfig, ScheduleInfo } from './run.types';
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
  attachments?: { fileName: string; mimeType: string; data: Buffer }[];
  scheduleInfo?: ScheduleInfo;
  agentIdentityUid?: string;
  /**
   * Chosen in advance by a producer that must create a run exactly once (a schedule firing
   * records it first): creating a second run with the same id fails on the primary key.
   */
  runId?: string;
}
