/** What other modules may use of runs/: they import it from here only (ESLint rule ambient/import-through-index). */
export {
  COMMAND_EVENTS,
  COMMAND_FINISHED_EVENT,
  COMMAND_OUTPUT_EVENT,
  COMMAND_STARTED_EVENT,
} from './command-events';
export { toConversationSteps } from './conversation/conversation.mapper';
export type { ExecutionInfo } from './conversation/conversation.mapper';
export { ACTION_CATEGORIES, DENIED_PREFIX } from './conversation/conversation.types';
export type { ChatMessage, Conversation } from './conversation/conversation.types';
export { withRequestId, withoutRequestId } from './conversation/stored-message';
export { RUN_MODES } from './dto/create-run.dto';
export { RunApproval } from './entities/run-approval.entity';
export type {
  ApprovalDecider,
  ApprovalDecision,
  ApprovalKind,
} from './entities/run-approval.entity';
export { RunAttachment } from './entities/run-attachment.entity';
export { RunEvent } from './entities/run-event.entity';
export { RunMessage } from './entities/run-message.entity';
export { Run } from './entities/run.entity';
export { FailedRunFollowups } from './failed-run-followups';
export type { NewRun } from './new-run';
export { BlockedRunRepository } from './blocked-run.repository';
export { deciderOf, RunApprovalRequests } from './run-approval-requests';
export { RunApprovalRepository } from './run-approval.repository';
export { RunAttachmentRepository } from './run-attachment.repository';
export { RunEventRepository } from './run-event.repository';
export type { ApprovalDecisionInput, DecidedListener } from './run-approval-requests';
export { RunCapacity } from './run-capacity.service';
export { RunCreationService } from './run-creation.service';
export { RunFollowupsService } from './run-followups.service';
export { FollowupAnnouncements } from './followup-announcements';
export type { FollowupWatch } from './followup-announcements';
export { RunFollowupRepository } from './run-followup.repository';
export { RunKeysService, REVOKED_RUN_KEY_RETENTION_MS } from './run-keys.service';
export { runPageUrl, sessionIdOf } from './run-links';
export { assertMetadata } from './run-metadata.rules';
export { EXECUTE_JOB, RUNS_QUEUE, RunQueue } from './run-queue.service';
export type { ExecuteJobData } from './run-queue.service';
export { RunAppends } from './run-appends.repository';
export type { AppendedEvent } from './run-appends.repository';
export { ConversationRunRepository } from './conversation-run.repository';
export {
  contentDeletedConflict,
  contentDeletedError,
  RunContentRepository,
} from './run-content.repository';
export type { RunContentDeletion } from './run-content.repository';
export type { TranscriptMessageRow } from './conversation-run.repository';
export { DebugWindowRepository } from './debug-window.repository';
export { KeptWorkspaceRepository } from './kept-workspace.repository';
export { RunLeaseRepository } from './run-lease.repository';
export type { RowCondition } from './run-lease.repository';
export { RunLookupRepository } from './run-lookup.repository';
export { RunUsageRepository, USAGE_GROUP_BY } from './run-usage.repository';
export type { UsageGroupBy } from './run-usage.repository';
export { RunSignals } from './run-signals.service';
export { isTerminal } from './run-state';
export type { RunState } from './run-state';
export { RunTransitions } from './run-transitions.service';
export { RunTransitionRepository } from './run-transition.repository';
export { RunsModule } from './runs.module';
export { RunsService } from './runs.service';
export { workerIdProblem } from './worker-host';
