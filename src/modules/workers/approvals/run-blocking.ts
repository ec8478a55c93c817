import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { newUuid } from '../../../common/ids';
import type { JsonObject } from '../../../common/json';
import { APP_CONFIG, AppConfig } from '../../../config/app-config';
import { NotificationEmitter, RunEndNotifications } from '../../notifications';
import type { StatusMessage } from '../../run-config';
import type { Run } from '../../runs';
import { RunApproval, RunApprovalRepository, RunTransitions } from '../../runs';
import { ExecutionFence } from '../execution-fence';
import type { LeaseToken } from '../execution-lease';
import type { ApprovalRequestDraft } from '../harness/harness.types';
import { WorkspaceRetentionService } from '../workspace/workspace-retention.service';

/** The summary column's width. */
const MAX_SUMMARY = 1000;

/** The run's status message while it waits: it names the pending action. */
export function blockedMessage(pending: Pick<ApprovalRequestDraft, 'kind' | 'summary'>): string {
  return pending.kind === 'question'
    ? `Waiting for an answer: ${pending.summary}`
    : `Waiting for approval: ${pending.summary}`;
}

/**
 * An execution that waits for a person ends its run BLOCKED. In one transaction, fenced by the
 * execution's token like every end: the run INPROGRESS → BLOCKED with a status message naming
 * the pending action, its usage, and its workspace kept for the blocked timeout; the request
 * (`run_approvals`); the `oz_run_blocked` timeline event with the request; and the
 * notifications `run.blocked` (the run-end listener) and `approval.requested`. Nothing of it
 * commits without the rest. The executor then closes the sandbox as after any end.
 */
@Injectable()
export class RunBlocking {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transitions: RunTransitions,
    private readonly retention: WorkspaceRetentionService,
    private readonly fence: ExecutionFence,
    private readonly notifications: NotificationEmitter,
    private readonly runEnds: RunEndNotifications,
    private readonly approvals: RunApprovalRepository,
  ) {}

  /** Refused (StaleExecutionError) once the token is stale: nothing is written then. */
  async block(
    run: Run,
    token: LeaseToken,
    pending: ApprovalRequestDraft,
    requestUsage: Run['requestUsage'],
  ): Promise<void> {
    const requestedAt = new Date();
    const id = pending.existingId ?? newUuid();
    const summary = pending.summary.slice(0, MAX_SUMMARY);
    const statusMessage: StatusMessage = {
      message: blockedMessage({ kind: pending.kind, summary }),
      pending_approval_id: id,
    };
    const approval: JsonObject = {
      id,
      kind: pending.kind,
      tool: pending.tool,
      arguments: pending.arguments as JsonObject,
      rule: pending.rule as JsonObject | null,
      summary,
      requested_at: requestedAt.toISOString(),
    };
    const keptUntil = new Date(
      requestedAt.getTime() + this.config.runs.blockedTimeoutSeconds * 1000,
    );
    const blocked = await this.dataSource.transaction(async (manager) => {
      const moved = await this.transitions.transition(
        run.id,
        'BLOCKED',
        {
          from: ['INPROGRESS'],
          set: {
            statusMessage,
            leaseOwner: null,
            leaseExpiresAt: null,
            requestUsage,
            ...this.retention.keepUntil(keptUntil),
          },
          where: ExecutionFence.transitionGuard(token),
          event: { executionId: token.executionId, payload: { ...statusMessage, approval } },
          moved: { ...run, executionCount: token.executionId, statusMessage, requestUsage },
        },
        manager,
      );
      if (!moved) return false;
      if (!pending.existingId) {
        const request: RunApproval = {
          id,
          runId: run.id,
          teamId: run.teamId,
          executionId: token.executionId,
          kind: pending.kind,
          tool: pending.tool,
          toolCallId: pending.toolCallId,
          arguments: pending.arguments,
          rule: pending.rule,
          summary,
          requestedAt,
          decision: null,
          comment: null,
          decidedBy: null,
          decidedAt: null,
          takenByExecution: null,
        };
        await this.approvals.insert(manager, request);
      }
      await this.notifications.emit(
        run.teamId,
        'approval.requested',
        async (m) => ({ run: await this.runEnds.summary(m, run.id), approval }),
        manager,
      );
      return true;
    });
    if (!blocked) await this.fence.check(token, 'state');
  }
}
