import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { ApiError } from '../../common/errors/api-error';
import { newUuid } from '../../common/ids';
import type { AuditBy } from '../audit';
import { AuditLog } from '../audit';
import { Run } from './entities/run.entity';
import { FollowupOutcome, RunFollowup } from './entities/run-followup.entity';
import { RunFollowupRepository } from './run-followup.repository';
import { RunLookupRepository } from './run-lookup.repository';
import { contentDeletedConflict } from './run-content.repository';
import { isTerminal, RunState, TERMINAL_STATES } from './run-state';
import { RunQueue } from './run-queue.service';
import { RunTransitions } from './run-transitions.service';
import { FailedRunFollowups } from './failed-run-followups';
import { FollowupAnnouncements } from './followup-announcements';
import type { ApprovalDecider, RunApproval } from './entities/run-approval.entity';
import { deciderOf, RunApprovalRequests } from './run-approval-requests';

/** Who decided a request by a follow-up no caller is known for (sent by Ambient itself). */
const FOLLOWUP_DECIDER: ApprovalDecider = { type: 'system', id: null, name: 'a follow-up' };

const OUTCOME_FOR_STATE: Partial<Record<RunState, FollowupOutcome>> = {
  QUEUED: 'queued_prompt',
  PENDING: 'queue_pending',
  CLAIMED: 'live_session',
  INPROGRESS: 'live_session',
};

/**
 * Follow-ups are stored first and delivered by whoever runs next: the execution that starts
 * (queued run), the live harness between turns (running run), or a new execution of the same
 * run started here (ended run). Storing before routing means a follow-up that races with the
 * run's end is still delivered: the executor re-queues a run that ends with undelivered ones.
 * A cancelled run takes none: they are stored under the run's row lock, so a cancel either comes
 * after (and drops them, RunTransitions) or before (409).
 */
@Injectable()
export class RunFollowupsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly followups: RunFollowupRepository,
    private readonly lookups: RunLookupRepository,
    private readonly transitions: RunTransitions,
    private readonly queue: RunQueue,
    private readonly failedRunFollowups: FailedRunFollowups,
    private readonly audit: AuditLog,
    private readonly approvals: RunApprovalRequests,
    private readonly announcements: FollowupAnnouncements,
  ) {}

  async submit(
    run: Run,
    body: { message?: string; mode?: string; attachments?: { attachment_id: string }[] },
    /** Who sent it through the API: a `run.followup` audit event commits with it. */
    by?: AuditBy,
  ): Promise<{ followup_id: string | null; outcome: FollowupOutcome; debug_agent_active?: true }> {
    if (body.attachments?.length) {
      throw new ApiError(
        'operation_not_supported',
        `attachments[0].attachment_id: unknown attachment "${body.attachments[0].attachment_id}"`,
      );
    }
    const message = body.message?.trim();
    if (!message) throw ApiError.invalid('message', 'must not be empty');
    const { id, state } = await this.dataSource.transaction(async (manager) => {
      // The run row's lock orders this against a cancel: the follow-up commits before the cancel
      // (which then drops it) or sees CANCELLED and is refused.
      const locked = await this.followups.lockRun(manager, run.id);
      if (locked.state === 'CANCELLED') {
        throw new ApiError(
          'conflict',
          'the run is CANCELLED; a cancelled run takes no follow-ups (start a new run)',
          { title: 'Cancelled runs cannot receive follow-ups.', retryable: false },
        );
      }
      if (locked.contentDeletedAt) {
        throw contentDeletedConflict(
          `the run's conversation (at ${locked.contentDeletedAt.toISOString()})`,
          'there is nothing to continue (start a new run)',
          'The run has no conversation to continue.',
        );
      }
      const now = new Date();
      // To a BLOCKED run, the message is the person's answer (the Oz way): it answers a pending
      // question and denies a pending approval, and is taken as that, not as one more user turn.
      const decided =
        locked.state === 'BLOCKED' ? await this.decideByMessage(manager, run.id, message, by) : [];
      const followup: RunFollowup = {
        id: newUuid(),
        runId: run.id,
        message,
        mode: body.mode ?? null,
        outcome: OUTCOME_FOR_STATE[locked.state] ?? 'queued_prompt',
        executionId: null,
        consumedAt: decided.length ? now : null,
        droppedAt: null,
        createdAt: now,
      };
      await this.followups.insert(manager, followup);
      // A live execution of the run reads its follow-ups only when one is announced.
      if (!decided.length) await this.announcements.stored(manager, run.id);
      if (by) {
        await this.audit.record(
          manager,
          by,
          'run.followup',
          { type: 'run', id: run.id },
          {
            followup_id: followup.id,
            run_state: locked.state,
            ...(decided.length ? { decided_approval_ids: decided.map((a) => a.id) } : {}),
          },
        );
      }
      return { id: followup.id, state: locked.state };
    });
    if (!isTerminal(state)) {
      const outcome = OUTCOME_FOR_STATE[state] ?? 'queued_prompt';
      return { followup_id: outcome === 'queued_prompt' ? null : id, outcome };
    }
    if (state === 'FAILED' && (await this.failedRunFollowups.take(run.id))) {
      // Inside the debug window of a failed setup: a debug agent answers, the run stays FAILED.
      await this.followups.setOutcome(id, 'live_session');
      return { followup_id: id, outcome: 'live_session', debug_agent_active: true };
    }
    const outcome = await this.route(run.id);
    await this.followups.setOutcome(id, outcome);
    return { followup_id: outcome === 'queued_prompt' ? null : id, outcome };
  }

  /** Decides the BLOCKED run's pending requests by a follow-up's message (in its transaction). */
  private async decideByMessage(
    manager: EntityManager,
    runId: string,
    message: string,
    by: AuditBy | undefined,
  ): Promise<RunApproval[]> {
    const decider = by ? deciderOf(by) : FOLLOWUP_DECIDER;
    const decided = await this.approvals.decidePending(manager, runId, (request) => ({
      decision: request.kind === 'question' ? 'answer' : 'deny',
      comment: message,
      by: decider,
    }));
    if (by) {
      for (const request of decided) {
        await this.audit.record(
          manager,
          by,
          'approval.decide',
          { type: 'run', id: runId },
          {
            approval_id: request.id,
            kind: request.kind,
            tool: request.tool,
            decision: request.decision,
            via: 'followup',
          },
        );
      }
    }
    return decided;
  }

  /** An ended run: start its continuation, unless someone else moved it first. */
  private async route(runId: string): Promise<FollowupOutcome> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const state = await this.lookups.stateOf(runId);
      // Continued and cancelled meanwhile: the cancel dropped this follow-up with the others.
      if (state === 'CANCELLED') return 'queued_prompt';
      if (!isTerminal(state)) return OUTCOME_FOR_STATE[state] ?? 'queued_prompt';
      if (await this.startContinuation(runId, [state])) return 'handoff_execution';
    }
    return 'queued_prompt';
  }

  /** Moves an ended run back to QUEUED for a new execution that continues its conversation. */
  async startContinuation(
    runId: string,
    from: readonly RunState[] = TERMINAL_STATES,
  ): Promise<boolean> {
    const requeued = await this.requeueEnded(runId, from);
    if (requeued) {
      const route = await this.lookups.dispatchRoute(runId);
      await this.queue.dispatch(route);
    }
    return requeued;
  }

  /**
   * The state change of a continuation alone, in `manager`'s transaction when given; the caller
   * enqueues (the worker does so once its job is done, a decision once it has committed).
   */
  requeueEnded(
    runId: string,
    from: readonly RunState[] = TERMINAL_STATES,
    manager?: EntityManager,
  ): Promise<boolean> {
    return this.transitions.transition(
      runId,
      'QUEUED',
      {
        from,
        set: {
          attempt: 0,
          finishedAt: null,
          statusMessage: null,
          leaseOwner: null,
          leaseExpiresAt: null,
        },
        // Nothing to continue once the content retention deleted the conversation.
        where: { sql: 'content_deleted_at IS NULL', params: {} },
      },
      manager,
    );
  }

  hasUndelivered(runId: string): Promise<boolean> {
    return this.followups.hasUndelivered(runId);
  }

  /** Claims every undelivered follow-up of the run for an execution, oldest first. */
  async takeUndelivered(
    runId: string,
    executionId: number,
    /** The caller's transaction (a fenced write, see ExecutionFence). */
    inTransaction?: EntityManager,
  ): Promise<string[]> {
    const take = (manager: EntityManager): Promise<string[]> =>
      this.followups.takeUndelivered(manager, runId, executionId);
    return inTransaction ? take(inTransaction) : this.dataSource.transaction(take);
  }
}
