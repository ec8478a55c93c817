import { Body, Controller, HttpCode, Inject, Post } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiBody,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentPrincipal } from '../../../common/auth/principal.decorator';
import { ApiProblems } from '../../../common/errors/problem.schema';
import { APP_CONFIG, AppConfig } from '../../../config/app-config';
import { ReportArtifactDto, ReportArtifactResponseDto } from '../../artifacts';
import type { ChatMessage } from '../harness/harness.types';
import { RemoteExecutionService } from './remote-execution.service';
import type { Principal } from '../../../common/auth/principal';
import { RunScoped } from '../../teams';
import {
  AppendEventDto,
  AppendEventsDto,
  EnvironmentSetupReportDto,
  EnvironmentSetupResponseDto,
  FinishTaskDto,
  FinishTaskResponseDto,
  FollowupsResponseDto,
  HeartbeatResponseDto,
  RecordMessagesDto,
  StartResponseDto,
} from './harness-support.dto';

const REPORT_ARTIFACT_BODY =
  "The type's fields go top-level or, as Oz's ReportArtifactRequest, inside `data` " +
  '(e.g. `{"artifact_type":"PULL_REQUEST","data":{"url":"…","branch":"…"}}`).';

/**
 * The run-scoped API an execution outside Ambient's workers reports through (Oz calls it
 * `/harness-support`). It takes only the execution's run-scoped key (`env_vars.WARP_API_KEY` of
 * the task assignment); the key names the run, so no path carries it. A 403 means the execution
 * no longer holds its run (cancelled, taken back, ended) and must stop.
 */
@ApiTags('harness-support')
@ApiBearerAuth()
@RunScoped()
@Controller('harness-support')
export class HarnessSupportController {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly executions: RemoteExecutionService,
  ) {}

  @Post('start')
  @HttpCode(200)
  @ApiOperation({ operationId: 'startExecution', summary: 'Start the execution (→ INPROGRESS)' })
  @ApiProblems(401, 403, 409)
  @ApiOkResponse({ type: StartResponseDto })
  async start(@CurrentPrincipal() principal: Principal): Promise<StartResponseDto> {
    const { run, inputs } = await this.executions.start(principal);
    const config = await this.executions.executionConfig(principal, run);
    const { environment, harnessSecrets, runSecrets, boundSecrets } =
      await this.executions.preparation(principal, run);
    const { runs } = this.config;
    return {
      run_id: run.id,
      team_id: run.teamId,
      execution_id: run.executionCount,
      title: run.title,
      mode: run.mode,
      prompt: run.prompt,
      skill_spec: run.skillSpec,
      config,
      first_execution: inputs.firstExecution,
      followups: inputs.followups,
      history: inputs.history,
      attachments: inputs.attachments.map((a) => ({
        file_name: a.fileName,
        mime_type: a.mimeType,
        data: a.data.toString('base64'),
      })),
      limits: {
        max_turns: runs.maxTurns,
        max_run_seconds: runs.maxRunSeconds,
        command_timeout_seconds: runs.commandTimeoutSeconds,
      },
      lease_ms: runs.leaseMs,
      environment: environment && {
        environment_id: environment.environmentId,
        sandbox: environment.sandbox,
        setup: environment.plan && {
          github_repos: environment.plan.repos,
          setup_commands: environment.plan.setupCommands,
          setup_timeout_seconds: environment.plan.timeoutMs / 1000,
          git_url_base: environment.plan.gitUrlBase,
          git_token: environment.plan.gitToken,
          // planFor gives a guest team's setup none of the run's secrets (an empty env).
          with_run_secrets: Object.keys(environment.plan.env).length > 0,
        },
      },
      harness_secrets: harnessSecrets,
      run_secrets: runSecrets,
      bound_secrets: boundSecrets,
    };
  }

  @Post('environment-setup')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'reportEnvironmentSetup',
    summary: "Report preparing the run's environment (a failure ends the run FAILED)",
  })
  @ApiProblems(400, 401, 403, 409)
  @ApiOkResponse({ type: EnvironmentSetupResponseDto })
  async environmentSetup(
    @CurrentPrincipal() principal: Principal,
    @Body() body: EnvironmentSetupReportDto,
  ): Promise<EnvironmentSetupResponseDto> {
    return { state: await this.executions.reportEnvironmentSetup(principal, body) };
  }

  @Post('heartbeat')
  @HttpCode(200)
  @ApiOperation({ operationId: 'renewExecutionLease', summary: "Renew the execution's lease" })
  @ApiProblems(401, 403, 409)
  @ApiOkResponse({ type: HeartbeatResponseDto })
  async heartbeat(@CurrentPrincipal() principal: Principal): Promise<HeartbeatResponseDto> {
    const { state, leaseExpiresAt } = await this.executions.heartbeat(principal);
    return { state, lease_expires_at: leaseExpiresAt.toISOString() };
  }

  @Post('messages')
  @HttpCode(204)
  @ApiOperation({ operationId: 'recordMessages', summary: 'Record conversation messages' })
  @ApiNoContentResponse({ description: 'Recorded' })
  @ApiProblems(400, 401, 403, 409)
  async messages(
    @CurrentPrincipal() principal: Principal,
    @Body() body: RecordMessagesDto,
  ): Promise<void> {
    await this.executions.recordMessages(principal, body.messages as unknown as ChatMessage[]);
  }

  @Post('artifacts')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'reportArtifact',
    summary: 'Report an artifact (PLAN, PULL_REQUEST, FILE, SCREENSHOT, EXTERNAL_REFERENCE)',
    description: REPORT_ARTIFACT_BODY,
  })
  @ApiBody({ type: ReportArtifactDto })
  @ApiProblems(400, 401, 403, 409)
  @ApiOkResponse({ type: ReportArtifactResponseDto })
  artifacts(
    @CurrentPrincipal() principal: Principal,
    @Body() body: Record<string, unknown>,
  ): Promise<ReportArtifactResponseDto> {
    return this.report(principal, body);
  }

  /** The same as `artifacts`: the path the Warp client posts Oz's ReportArtifactRequest to. */
  @Post('report-artifact')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'reportArtifactAsOz',
    summary: 'Report an artifact (the Oz client path of POST /harness-support/artifacts)',
    description: REPORT_ARTIFACT_BODY,
  })
  @ApiBody({ type: ReportArtifactDto })
  @ApiProblems(400, 401, 403, 409)
  @ApiOkResponse({ type: ReportArtifactResponseDto })
  reportArtifact(
    @CurrentPrincipal() principal: Principal,
    @Body() body: Record<string, unknown>,
  ): Promise<ReportArtifactResponseDto> {
    return this.report(principal, body);
  }

  private async report(
    principal: Principal,
    body: Record<string, unknown>,
  ): Promise<ReportArtifactResponseDto> {
    const artifact = await this.executions.reportArtifact(principal, body);
    return { artifact_uid: artifact.id, artifact_type: artifact.artifactType };
  }

  @Post('followups')
  @HttpCode(200)
  @ApiOperation({ operationId: 'takeFollowups', summary: 'Take the follow-ups sent meanwhile' })
  @ApiProblems(401, 403, 409)
  @ApiOkResponse({ type: FollowupsResponseDto })
  async followups(@CurrentPrincipal() principal: Principal): Promise<FollowupsResponseDto> {
    return { messages: await this.executions.takeFollowups(principal) };
  }

  @Post('events')
  @HttpCode(204)
  @ApiOperation({ operationId: 'appendRunEvent', summary: "Append an event to the run's timeline" })
  @ApiNoContentResponse({ description: 'Recorded' })
  @ApiProblems(400, 401, 403, 409)
  async events(
    @CurrentPrincipal() principal: Principal,
    @Body() body: AppendEventDto,
  ): Promise<void> {
    await this.executions.appendEvents(principal, [body]);
  }

  @Post('events/batch')
  @HttpCode(204)
  @ApiOperation({
    operationId: 'appendRunEvents',
    summary: "Append events to the run's timeline, in order, all or none",
  })
  @ApiNoContentResponse({ description: 'Recorded' })
  @ApiProblems(400, 401, 403, 409)
  async eventsBatch(
    @CurrentPrincipal() principal: Principal,
    @Body() body: AppendEventsDto,
  ): Promise<void> {
    await this.executions.appendEvents(principal, body.events);
  }

  @Post('finish-task')
  @HttpCode(200)
  @ApiOperation({ operationId: 'finishTask', summary: 'Report the result and end the execution' })
  @ApiProblems(400, 401, 403, 409)
  @ApiOkResponse({ type: FinishTaskResponseDto })
  async finish(
    @CurrentPrincipal() principal: Principal,
    @Body() body: FinishTaskDto,
  ): Promise<FinishTaskResponseDto> {
    return { state: await this.executions.finish(principal, body) };
  }
}
