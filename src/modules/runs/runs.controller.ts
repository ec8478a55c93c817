import {
  Body,
  Controller,
  Get,
  Header,
  HttpCode,
  Inject,
  Param,
  Post,
  Query,
  Req,
  Res,
} from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { CurrentPrincipal } from '../../common/auth/principal.decorator';
import { ApiError } from '../../common/errors/api-error';
import { ApiProblems } from '../../common/errors/problem.schema';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { AuditLog } from '../audit';
import type { IdempotencyClaim, IdempotentRequest } from '../idempotency';
import { IdempotencyGate, Idempotent } from '../idempotency';
import type { Principal } from '../../common/auth/principal';
import type { Run } from './entities/run.entity';
import { CreateRunDto, RunAgentResponseDto } from './dto/create-run.dto';
import { FollowupResponseDto, SubmitFollowupDto } from './dto/followup.dto';
import { ListHandoffAttachmentsResponseDto } from './dto/handoff-attachment.dto';
import {
  ListRunsResponseDto,
  RunByExternalReferenceResponseDto,
  RunItemDto,
  TimelineResponseDto,
} from './dto/run-item.dto';
import { RunAttachmentsService } from './run-attachments.service';
import { RunCreationService } from './run-creation.service';
import { RunFollowupsService } from './run-followups.service';
import { parseRunListParams } from './run-list.params';
import { ApiRunListQuery } from './run-list.swagger';
import { RunsService } from './runs.service';
import { RequirePermission } from '../../common/auth/require-permission.decorator';

@ApiTags('agent')
@ApiBearerAuth()
@Controller('agent')
export class RunsController {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly runs: RunsService,
    private readonly creation: RunCreationService,
    private readonly followups: RunFollowupsService,
    private readonly attachments: RunAttachmentsService,
    private readonly audit: AuditLog,
    private readonly idempotency: IdempotencyGate,
  ) {}

  @Post('runs')
  @HttpCode(200)
  @RequirePermission('runs.create')
  @ApiOperation({ operationId: 'createRun', summary: 'Run an agent task (preferred)' })
  @ApiProblems(400, 401, 403, 409)
  @ApiOkResponse({ type: RunAgentResponseDto })
  @Idempotent({ byHandler: true })
  createRun(
    @CurrentPrincipal() principal: Principal,
    @Body() body: CreateRunDto,
    @Req() request: IdempotentRequest,
    @Res({ passthrough: true }) response: Response,
  ) {
    return this.createOnce(principal, body, request, response);
  }

  @Post('run')
  @HttpCode(200)
  @RequirePermission('runs.create')
  @ApiOperation({ operationId: 'runAgent', summary: 'Run an agent task (legacy path)' })
  @ApiProblems(400, 401, 403, 409)
  @ApiOkResponse({ type: RunAgentResponseDto })
  @Idempotent({ byHandler: true })
  runAgent(
    @CurrentPrincipal() principal: Principal,
    @Body() body: CreateRunDto,
    @Req() request: IdempotentRequest,
    @Res({ passthrough: true }) response: Response,
  ) {
    return this.createOnce(principal, body, request, response);
  }

  /**
   * With `Idempotency-Key`, under its claim (IdempotencyGate; the answer is recorded with the run).
   * Not through the interceptor: its rxjs pipeline would cost every creation, with a key or not.
   */
  private createOnce(
    principal: Principal,
    body: CreateRunDto,
    request: IdempotentRequest,
    response: Response,
  ): Promise<unknown> {
    const key = this.idempotency.keyOf(request);
    if (key === undefined) return this.create(principal, body, undefined);
    return this.idempotency.around(key, request, response, (claim) =>
      this.create(principal, body, claim),
    );
  }

  private async create(
    principal: Principal,
    body: CreateRunDto,
    claim: IdempotencyClaim | undefined,
  ): Promise<RunAgentResponseDto> {
    const attachments = [
      ...(body.attachments ?? []).map((a) => ({
        fileName: a.file_name,
        mimeType: a.mime_type,
        data: Buffer.from(a.data, 'base64'),
      })),
      ...(body.images ?? []).map((img, i) => ({
        fileName: `image-${i + 1}.${img.mime_type.split('/')[1]}`,
        mimeType: img.mime_type,
        data: Buffer.from(img.data, 'base64'),
      })),
    ];
    if (attachments.length > 5) throw ApiError.invalid('attachments', 'at most 5 are allowed');
    const create = () =>
      this.creation.create({
        teamId: principal.teamId,
        creatorId: principal.userId,
        creatorMayBeAgent: principal.userType === 'service_account',
        source: 'API',
        prompt: body.prompt,
        title: body.title,
        skill: body.skill,
        config: body.config,
        metadata: body.metadata,
        parentRunId: body.parent_run_id,
        conversationId: body.conversation_id,
        mode: body.mode,
        interactive: body.interactive,
        maxCostUsd: body.max_cost_usd,
        attachments,
        agentIdentityUid: body.agent_identity_uid,
        // Recorded with the run, in its transaction (the answer is 200 with runAgentResponse).
        idempotency: claim && { claim, status: 200, body: runAgentResponse },
        auditBy: principal,
      });
    const run = await this.audit.deniedOn(principal, 'run.create', null, create);
    return runAgentResponse(run);
  }

  @Get('runs')
  @RequirePermission('runs.read')
  @ApiOperation({ operationId: 'listRuns', summary: 'List agent runs' })
  @ApiProblems(400, 401, 403, 404)
  @ApiRunListQuery()
  @ApiOkResponse({ type: ListRunsResponseDto })
  async list(
    @CurrentPrincipal() principal: Principal,
    @Req() req: Request,
  ): Promise<ListRunsResponseDto> {
    const params = parseRunListParams(req.query as Record<string, unknown>, {
      metadataFilterEnabled: this.config.runs.metadataFilterEnabled,
    });
    const { runs, nextCursor } = await this.runs.list(principal.teamId, params);
    return {
      runs,
      page_info: nextCursor
        ? { has_next_page: true, next_cursor: nextCursor }
        : { has_next_page: false, next_cursor: '' },
    };
  }

  @Get('runs/:runId')
  @RequirePermission('runs.read')
  @ApiOperation({ operationId: 'getRun', summary: 'Get run details' })
  @ApiProblems(401, 404)
  @ApiParam({ name: 'runId' })
  @ApiOkResponse({ type: RunItemDto })
  get(
    @CurrentPrincipal() principal: Principal,
    @Param('runId') runId: string,
  ): Promise<RunItemDto> {
    return this.runs.getItem(principal.teamId, runId);
  }

  @Get('runs/:runId/handoff/attachments')
  @RequirePermission('runs.read')
  @ApiOperation({
    operationId: 'listHandoffAttachments',
    summary: "The run's attachments, with signed download URLs",
    description:
      'The files attached to the run (at creation), oldest first, then by file name, each with ' +
      'a time-limited download URL; an empty list when none were attached.',
  })
  @ApiProblems(401, 404)
  @ApiParam({ name: 'runId' })
  @ApiOkResponse({ type: ListHandoffAttachmentsResponseDto })
  async handoffAttachments(
    @CurrentPrincipal() principal: Principal,
    @Param('runId') runId: string,
  ): Promise<ListHandoffAttachmentsResponseDto> {
    return { attachments: await this.attachments.list(principal.teamId, runId) };
  }

  @Post('runs/:runId/cancel')
  @HttpCode(200)
  @Header('Content-Type', 'application/json')
  @RequirePermission('runs.cancel')
  @ApiOperation({ operationId: 'cancelRun', summary: 'Cancel a run' })
  @ApiProblems(400, 401, 404, 409, 422)
  @ApiParam({ name: 'runId' })
  @ApiOkResponse({ schema: { type: 'string', description: 'The ID of the cancelled run' } })
  @Idempotent()
  async cancel(
    @CurrentPrincipal() principal: Principal,
    @Param('runId') runId: string,
  ): Promise<string> {
    await this.runs.cancel(principal, runId);
    return JSON.stringify(runId);
  }

  @Post('runs/:runId/followups')
  @HttpCode(200)
  @RequirePermission('runs.followup')
  @ApiOperation({ operationId: 'submitFollowup', summary: 'Send a follow-up message to a run' })
  @ApiProblems(400, 401, 404, 409, 422)
  @ApiParam({ name: 'runId' })
  @ApiOkResponse({ type: FollowupResponseDto })
  @Idempotent()
  async followup(
    @CurrentPrincipal() principal: Principal,
    @Param('runId') runId: string,
    @Body() body: SubmitFollowupDto,
  ): Promise<FollowupResponseDto> {
    const run = await this.runs.findVisible(principal.teamId, runId);
    return this.followups.submit(run, body, principal);
  }

  @Get('runs/:runId/timeline')
  @RequirePermission('runs.read')
  @ApiOperation({ operationId: 'getRunTimeline', summary: 'Timeline of lifecycle events of a run' })
  @ApiProblems(401, 404)
  @ApiParam({ name: 'runId' })
  @ApiOkResponse({ type: TimelineResponseDto })
  async timeline(
    @CurrentPrincipal() principal: Principal,
    @Param('runId') runId: string,
  ): Promise<TimelineResponseDto> {
    return { events: await this.runs.timeline(principal.teamId, runId) };
  }

  @Get('run-by-external-reference')
  @RequirePermission('runs.read')
  @ApiOperation({
    operationId: 'getRunByExternalReference',
    summary: 'Find the run that reported an external reference or pull request URL',
  })
  @ApiProblems(400, 401, 404)
  @ApiQuery({ name: 'url', required: true, type: String })
  @ApiOkResponse({ type: RunByExternalReferenceResponseDto })
  async byExternalReference(
    @CurrentPrincipal() principal: Principal,
    @Query('url') url: unknown,
  ): Promise<RunByExternalReferenceResponseDto> {
    if (typeof url !== 'string' || url.trim() === '') throw ApiError.invalid('url', 'is required');
    return { run_id: await this.runs.runIdByExternalReference(principal.teamId, url) };
  }
}

function runAgentResponse(run: Run): RunAgentResponseDto {
  return { run_id: run.id, task_id: run.id, state: run.state, at_capacity: run.atCapacity };
}
