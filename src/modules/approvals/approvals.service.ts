import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { Principal } from '../../common/auth/principal';
import { ApiError } from '../../common/errors/api-error';
import { AuditLog } from '../audit';
import {
  deciderOf,
  BlockedRunRepository,
  RunApprovalRequests,
  RunFollowupsService,
  RunQueue,
  RunsService,
} from '../runs';
import type { Run, RunApproval } from '../runs';
import { ApprovalDeciders } from './approval-deciders';
import { toApprovalDto } from './approval.mapper';
import type { ApprovalDto, DecideApprovalDto, DecideApprovalResponseDto } from './dto/approval.dto';

/**
 * A run's requests for a person and their decisions. Deciding holds the run's row lock: the
 * decision, its audit event and notification, and (once no request of the run is undecided)
 * the run's move back to QUEUED commit together, and two deciders of one request are ordered:
 * the second finds it decided (409).
 */
@Injectable()
export class ApprovalsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly runs: RunsService,
    private readonly requests: RunApprovalRequests,
    private readonly followups: RunFollowupsService,
    private readonly queue: RunQueue,
    private readonly deciders: ApprovalDeciders,
    private readonly audit: AuditLog,
    private readonly blockedRuns: BlockedRunRepository,
  ) {}

  async listForRun(principal: Principal, runId: string): Promise<ApprovalDto[]> {
    const run = await this.runs.findVisible(principal.teamId, runId);
    const rows = await this.requests.list(run.id);
    const named = await this.deciders.approversOf(principal.teamId, [run.executorId]);
    const mayDecide = this.deciders.refusal(principal, run.executorId, named) === null;
    return rows.map((row) =>
      toApprovalDto(row, mayDecide && run.state === 'BLOCKED' && row.decision === null),
    );
  }

  async decide(
    principal: Principal,
    runId: string,
    approvalId: string,
    body: DecideApprovalDto,
  ): Promise<DecideApprovalResponseDto> {
    const run = await this.runs.findVisible(principal.teamId, runId);
    await this.audit.deniedOn(principal, 'approval.decide', runTarget(run.id), async () => {
      const named = await this.deciders.approversOf(principal.teamId, [run.executorId]);
      const refusal = this.deciders.refusal(principal, run.executorId, named);
      if (refusal) throw new ApiError('not_authorized', refusal);
    });
    const request = APPROVAL_ID.test(approvalId)
      ? await this.requests.find(run.id, approvalId)
      : null;
    if (!request) throw ApiError.notFound(`approval request "${approvalId}" of run "${runId}"`);
    const comment = checkedDecision(request, body);
    if (request.decision) throw alreadyDecided(request);
    const outcome = await this.dataSource.transaction(async (manager) => {
      const locked = await this.blockedRuns.lock(manager, run.id);
      if (!locked) throw ApiError.notFound(`run "${runId}"`);
      if (locked.state !== 'BLOCKED') {
        // Most often a decision that came first queued the run: say who decided.
        const current = await this.requests.find(run.id, request.id, manager);
        throw current?.decision ? alreadyDecided(current) : notBlocked(locked.state);
      }
      const decided = await this.requests.decide(manager, run.id, request.id, {
        decision: body.decision,
        comment,
        by: deciderOf(principal),
      });
      if (!decided) {
        const current = await this.requests.find(run.id, request.id, manager);
        throw alreadyDecided(current ?? request);
      }
      await this.audit.record(manager, principal, 'approval.decide', runTarget(run.id), {
        approval_id: decided.id,
        kind: decided.kind,
        tool: decided.tool,
        decision: decided.decision,
      });
      const resumes =
        !(await this.requests.hasUndecided(manager, run.id)) &&
        (await this.followups.requeueEnded(run.id, ['BLOCKED'], manager));
      return { decided, runState: resumes ? 'QUEUED' : locked.state };
    });
    if (outcome.runState === 'QUEUED') await this.queue.dispatch(run);
    return { approval: toApprovalDto(outcome.decided, false), run_state: outcome.runState };
  }
}

/** Request ids are UUIDs; anything else names no request (and never reaches the ascii column). */
const APPROVAL_ID = /^[A-Za-z0-9-]{1,36}$/;

/** The comment to store; 400 naming the field when the decision does not fit the request. */
function checkedDecision(request: RunApproval, body: DecideApprovalDto): string | null {
  const comment = body.comment?.trim() || null;
  if (request.kind === 'question' && body.decision !== 'answer') {
    throw ApiError.invalid(
      'decision',
      'this request is a question: send "answer" with the answer as comment',
    );
  }
  if (request.kind === 'approval' && body.decision === 'answer') {
    throw ApiError.invalid(
      'decision',
      'this request asks for an approval: send "approve" or "deny" (a question is answered)',
    );
  }
  if (body.decision === 'answer' && !comment) {
    throw ApiError.invalid('comment', 'is the answer to the question and must not be empty');
  }
  return comment;
}

function alreadyDecided(request: RunApproval): ApiError {
  const by = request.decidedBy?.name ?? 'someone';
  const at = request.decidedAt?.toISOString() ?? 'an earlier time';
  return new ApiError(
    'conflict',
    `approval request "${request.id}" was already decided (${request.decision}) by ${by} at ${at}`,
    { title: 'Already decided.', retryable: false },
  );
}

function notBlocked(state: Run['state']): ApiError {
  return new ApiError('conflict', `the run is ${state}, not BLOCKED: it waits for no decision`, {
    title: 'The run does not wait for a decision.',
    retryable: false,
  });
}

function runTarget(runId: string) {
  return { type: 'run', id: runId };
}
