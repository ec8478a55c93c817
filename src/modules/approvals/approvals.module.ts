import { Module } from '@nestjs/common';
import { IdentitiesModule } from '../identities';
import { NotificationsModule } from '../notifications';
import { RunsModule } from '../runs';
import { ApprovalDeciders } from './approval-deciders';
import { ApprovalExpirySweeper } from './approval-expiry.sweeper';
import { ApprovalInbox } from './approval-inbox.service';
import { ApprovalInboxQuery } from './approval-inbox.query';
import { ApprovalNotifications } from './approval-notifications';
import { ApprovalsController } from './approvals.controller';
import { ApprovalsService } from './approvals.service';

/**
 * Every role: `approval.decided` is emitted wherever a request is decided (the API, a follow-up
 * through the ingress, the worker's timeout sweep).
 */
@Module({
  imports: [RunsModule, NotificationsModule, IdentitiesModule],
  providers: [ApprovalNotifications, ApprovalDeciders],
  exports: [ApprovalDeciders],
})
export class ApprovalsModule {}

/** The approvals API: a run's requests, the team's inbox, decisions. */
@Module({
  imports: [ApprovalsModule, RunsModule],
  controllers: [ApprovalsController],
  providers: [ApprovalsService, ApprovalInbox, ApprovalInboxQuery],
})
export class ApprovalsApiModule {}

/** The worker role's sweep of BLOCKED runs nobody decided in time. */
@Module({
  imports: [ApprovalsModule, RunsModule],
  providers: [ApprovalExpirySweeper],
})
export class ApprovalsWorkerModule {}
