import { Injectable, OnModuleInit } from '@nestjs/common';
import { NotificationEmitter, RunEndNotifications } from '../notifications';
import { RunApprovalRequests } from '../runs';
import { approvalPayload } from './approval.mapper';

/**
 * Emits `approval.decided` in the transaction that decides a request (through the API, a
 * follow-up, a cancel or the blocked timeout), so the notification commits with the decision.
 * `data` is `{run, approval}`: the run as the run events show it, the request as the API does.
 */
@Injectable()
export class ApprovalNotifications implements OnModuleInit {
  constructor(
    private readonly requests: RunApprovalRequests,
    private readonly emitter: NotificationEmitter,
    private readonly runs: RunEndNotifications,
  ) {}

  onModuleInit(): void {
    this.requests.onDecided(async (decided, manager) => {
      await this.emitter.emit(
        decided.teamId,
        'approval.decided',
        async (m) => ({
          run: await this.runs.summary(m, decided.runId),
          approval: approvalPayload(decided),
        }),
        manager,
      );
    });
  }
}
