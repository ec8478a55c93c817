import { Body, Controller, Get, HttpCode, Param, Post, Req } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import type { Request } from 'express';
import { CurrentPrincipal } from '../../common/auth/principal.decorator';
import type { Principal } from '../../common/auth/principal';
import { RequirePermission } from '../../common/auth/require-permission.decorator';
import { ApiProblems } from '../../common/errors/problem.schema';
import { Idempotent } from '../idempotency';
import {
  DEFAULT_INBOX_PAGE,
  INBOX_STATES,
  MAX_INBOX_PAGE,
  parseInboxParams,
} from './approval-inbox.params';
import { ApprovalInbox } from './approval-inbox.service';
import { ApprovalsService } from './approvals.service';
import {
  DecideApprovalDto,
  DecideApprovalResponseDto,
  ListApprovalInboxResponseDto,
  ListRunApprovalsResponseDto,
} from './dto/approval.dto';

@ApiTags('agent')
@ApiBearerAuth()
@Controller('agent')
export class ApprovalsController {
  constructor(
    private readonly approvals: ApprovalsService,
    private readonly inbox: ApprovalInbox,
  ) {}

  @Get('runs/:runId/approvals')
  @RequirePermission('runs.read')
  @ApiOperation({
    operationId: 'listRunApprovals',
    summary: "A run's requests for approval and its questions, oldest first",
    description:
      'Every request the run made of a person, decided or not. While one is undecided the run ' +
      'is BLOCKED; POST …/approvals/{approvalId} decides it.',
  })
  @ApiProblems(401, 404)
  @ApiParam({ name: 'runId' })
  @ApiOkResponse({ type: ListRunApprovalsResponseDto })
  async listForRun(
    @CurrentPrincipal() principal: Principal,
    @Param('runId') runId: string,
  ): Promise<ListRunApprovalsResponseDto> {
    return { approvals: await this.approvals.listForRun(principal, runId) };
  }

  @Post('runs/:runId/approvals/:approvalId')
  @HttpCode(200)
  @RequirePermission('approvals.decide')
  @ApiOperation({
    operationId: 'decideRunApproval',
    summary: 'Approve or deny a request, or answer a question, of a BLOCKED run',
    description:
      'Members and admins decide (people only); an agent identity that names `approvers` lets ' +
      'only them and admins decide its runs. Once no request of the run is undecided, the run ' +
      'is QUEUED and a new execution resumes it: an approved call runs (once), a denied one is ' +
      'reported to the agent with the comment, an answer is given to it. 409 when the request ' +
      'was decided already or the run is not BLOCKED.',
  })
  @ApiProblems(400, 401, 403, 404, 409)
  @ApiParam({ name: 'runId' })
  @ApiParam({ name: 'approvalId' })
  @ApiOkResponse({ type: DecideApprovalResponseDto })
  @Idempotent()
  decide(
    @CurrentPrincipal() principal: Principal,
    @Param('runId') runId: string,
    @Param('approvalId') approvalId: string,
    @Body() body: DecideApprovalDto,
  ): Promise<DecideApprovalResponseDto> {
    return this.approvals.decide(principal, runId, approvalId, body);
  }

  @Get('approvals')
  @RequirePermission('runs.read')
  @ApiOperation({
    operationId: 'listApprovalInbox',
    summary: "The team's approval inbox: requests across its runs, newest first",
    description:
      "Undecided requests by default (`state=pending`), each with its run's title and state and " +
      'whether the caller may decide it. Cursor pages: pass page_info.next_cursor as `cursor` ' +
      'with the same state.',
  })
  @ApiProblems(400, 401)
  @ApiQuery({ name: 'state', required: false, enum: INBOX_STATES })
  @ApiQuery({
    name: 'limit',
    required: false,
    schema: { type: 'integer', minimum: 1, maximum: MAX_INBOX_PAGE, default: DEFAULT_INBOX_PAGE },
  })
  @ApiQuery({ name: 'cursor', required: false, type: String })
  @ApiOkResponse({ type: ListApprovalInboxResponseDto })
  listInbox(
    @CurrentPrincipal() principal: Principal,
    @Req() req: Request,
  ): Promise<ListApprovalInboxResponseDto> {
    return this.inbox.list(principal, parseInboxParams(req.query as Record<string, unknown>));
  }
}
