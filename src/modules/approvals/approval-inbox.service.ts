import { Injectable } from '@nestjs/common';
import type { Principal } from '../../common/auth/principal';
import { ApprovalDeciders } from './approval-deciders';
import type { InboxParams } from './approval-inbox.params';
import { ApprovalInboxQuery } from './approval-inbox.query';
import { toApprovalDto } from './approval.mapper';
import type { ListApprovalInboxResponseDto } from './dto/approval.dto';

/** The inbox page of a caller: the requests, their runs, and what the caller may decide. */
@Injectable()
export class ApprovalInbox {
  constructor(
    private readonly query: ApprovalInboxQuery,
    private readonly deciders: ApprovalDeciders,
  ) {}

  async list(principal: Principal, params: InboxParams): Promise<ListApprovalInboxResponseDto> {
    const { requests, runs, nextCursor } = await this.query.page(principal.teamId, params);
    const executors = [...runs.values()].map((run) => run.executorId);
    const named = await this.deciders.approversOf(principal.teamId, executors);
    return {
      approvals: requests.map((request) => {
        const run = runs.get(request.runId);
        const mayDecide =
          !!run &&
          run.state === 'BLOCKED' &&
          request.decision === null &&
          this.deciders.refusal(principal, run.executorId, named) === null;
        return {
          ...toApprovalDto(request, mayDecide),
          run_title: run?.title ?? '',
          run_state: run?.state ?? '',
        };
      }),
      page_info: nextCursor
        ? { has_next_page: true, next_cursor: nextCursor }
        : { has_next_page: false, next_cursor: '' },
    };
  }
}
