import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { SandboxResourcesDto } from '../../environments';
import { NETWORK_POLICIES } from '../sandbox/sandbox.types';
import type { NetworkPolicy } from '../sandbox/sandbox.types';
import type { EgressRuleInput } from '../../../common/egress/egress-policy';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateIf,
} from 'class-validator';
import { ERROR_CODES } from '../../../common/errors/error-codes';
import { MAX_EVENT_AGE_MS, MAX_RAW_TRANSCRIPT_CHARS } from './worker-protocol';
import type { FinishReport, SetupReport, UsageReport } from '../execution-result';
import { ValidateNestedEach, ValidateNestedObject } from '../../../common/errors/validation';
import { MAX_EVENTS_PER_WRITE } from '../harness/execution-timeline';

const MESSAGE_ROLES = ['system', 'user', 'assistant', 'tool'];

@ApiSchema({ name: 'HarnessExecutionLimits' })
export class ExecutionLimitsDto {
  @ApiProperty() max_turns: number;
  @ApiProperty() max_run_seconds: number;
  @ApiProperty() command_timeout_seconds: number;
}

@ApiSchema({ name: 'HarnessAttachment' })
export class HarnessAttachmentDto {
  @ApiProperty() file_name: string;
  @ApiProperty() mime_type: string;
  @ApiProperty({ description: 'base64' }) data: string;
}

@ApiSchema({ name: 'HarnessRepository' })
export class HarnessRepositoryDto {
  @ApiProperty() owner: string;
  @ApiProperty() repo: string;
}

@ApiSchema({ name: 'HarnessEnvironmentSetup' })
export class HarnessEnvironmentSetupDto {
  @ApiProperty({ type: [HarnessRepositoryDto], description: 'Cloned into <workspace>/<repo>' })
  github_repos: HarnessRepositoryDto[];
  @ApiProperty({ type: [String], description: 'Run in order with bash in the workspace root' })
  setup_commands: string[];
  @ApiProperty({ description: 'Per clone and per setup command' })
  setup_timeout_seconds: number;
  @ApiProperty({ description: "The server's clone base: <git_url_base>/<owner>/<repo>.git" })
  git_url_base: string;
  @ApiProperty({
    nullable: true,
    type: String,
    description: "The team secret GITHUB_TOKEN, for private repositories (git's http.extraHeader)",
  })
  git_token: string | null;
  @ApiProperty({
    description:
      "Whether setup commands get run_secrets as variables: false in another team's environment, " +
      "whose setup commands are the owner's",
  })
  with_run_secrets: boolean;
}

@ApiSchema({ name: 'HarnessSandbox' })
export class HarnessSandboxDto {
  @ApiPropertyOptional({ description: "The environment's image (docker sandboxes)" })
  docker_image?: string;
  @ApiPropertyOptional({ enum: NETWORK_POLICIES })
  network?: NetworkPolicy;
  @ApiPropertyOptional({
    type: 'array',
    items: {},
    description: "The environment's egress_allow rules as stored (network allowlist)",
  })
  egress_allow?: EgressRuleInput[];
  @ApiPropertyOptional({ type: SandboxResourcesDto })
  resources?: SandboxResourcesDto;
}

@ApiSchema({ name: 'HarnessEnvironment' })
export class HarnessEnvironmentDto {
  @ApiProperty() environment_id: string;
  @ApiPropertyOptional({
    type: HarnessSandboxDto,
    nullable: true,
    description:
      'How the environment asks for its sandbox; the worker applies it within its own limits. Null when the environment no longer exists',
  })
  sandbox?: HarnessSandboxDto | null;
  @ApiProperty({
    type: HarnessEnvironmentSetupDto,
    nullable: true,
    description: 'Null when the environment no longer exists (the setup then fails)',
  })
  setup: HarnessEnvironmentSetupDto | null;
}

@ApiSchema({ name: 'HarnessBoundSecret' })
export class HarnessBoundSecretDto {
  @ApiProperty() name: string;
  @ApiProperty({ description: "What the sandbox's variable of that name holds" })
  placeholder: string;
  @ApiProperty({ description: 'The value the egress proxy puts in its place for `hosts` only' })
  value: string;
  @ApiProperty({ type: [String], description: 'Host patterns (egress_allow string syntax)' })
  hosts: string[];
}

@ApiSchema({ name: 'HarnessStartResponse' })
export class StartResponseDto {
  @ApiProperty() run_id: string;
  @ApiProperty() team_id: string;
  @ApiProperty() execution_id: number;
  @ApiProperty() title: string;
  @ApiProperty() mode: string;
  @ApiProperty({ description: 'The run prompt (used on the first execution)' }) prompt: string;
  @ApiProperty({ nullable: true, type: String }) skill_spec: string | null;
  @ApiProperty({ type: 'object', additionalProperties: true }) config: object;
  @ApiProperty({ description: 'True when the execution starts the conversation with the prompt' })
  first_execution: boolean;
  @ApiProperty({ type: [String], description: 'Follow-ups for this execution, oldest first' })
  followups: string[];
  @ApiProperty({
    type: 'array',
    items: { type: 'object', additionalProperties: true },
    description: 'Chat messages so far',
  })
  history: object[];
  @ApiProperty({ type: [HarnessAttachmentDto] }) attachments: HarnessAttachmentDto[];
  @ApiProperty({ type: ExecutionLimitsDto }) limits: ExecutionLimitsDto;
  @ApiProperty({ description: 'Renew the lease (heartbeat) well within this many milliseconds' })
  lease_ms: number;
  @ApiProperty({
    type: HarnessEnvironmentDto,
    nullable: true,
    description:
      "The run's environment, prepared in the workspace before the harness starts (report " +
      'the outcome with POST /harness-support/environment-setup); null without one',
  })
  environment: HarnessEnvironmentDto | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: 'Values of the team secrets named in config.harness_auth_secrets, by name',
  })
  harness_secrets: Record<string, string>;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    description:
      "The team secrets listed in config.secrets: environment variables for commands (a host-bound secret's placeholder)",
  })
  run_secrets: Record<string, string>;
  @ApiProperty({
    type: [HarnessBoundSecretDto],
    description:
      "The secrets bound to hosts (inject_hosts): the worker's egress proxy injects them; never give a value to the sandbox",
  })
  bound_secrets: HarnessBoundSecretDto[];
}

/** The outcome of preparing the run's environment on the worker's machine. */
@ApiSchema({ name: 'EnvironmentSetupReport' })
export class EnvironmentSetupReportDto implements SetupReport {
  @ApiProperty({ description: 'True when the workspace is ready' })
  @IsBoolean()
  success: boolean;

  @ApiPropertyOptional({ description: 'Required when success is false: what failed, last lines' })
  @ValidateIf((report: EnvironmentSetupReportDto) => report.success === false)
  @IsString()
  @MinLength(1)
  @MaxLength(200_000)
  message?: string;

  @ApiPropertyOptional({
    nullable: true,
    type: Number,
    description: 'Exit code of the failed step; null when it was killed or timed out',
  })
  @IsOptional()
  @IsInt()
  exit_code?: number | null;
}

@ApiSchema({ name: 'EnvironmentSetupReportResponse' })
export class EnvironmentSetupResponseDto {
  @ApiProperty({ description: 'INPROGRESS after a success; FAILED after a failure' })
  state: string;
}

@ApiSchema({ name: 'HarnessHeartbeatResponse' })
export class HeartbeatResponseDto {
  @ApiProperty() state: string;
  @ApiProperty({ format: 'date-time' }) lease_expires_at: string;
}

@ApiSchema({ name: 'HarnessChatMessage' })
export class ChatMessageDto {
  @ApiProperty({ enum: MESSAGE_ROLES }) @IsIn(MESSAGE_ROLES) role: string;
  @ApiPropertyOptional({
    description: 'Text, or an array of content parts',
    nullable: true,
    oneOf: [
      { type: 'string' },
      { type: 'array', items: { type: 'object', additionalProperties: true } },
    ],
  })
  @IsOptional()
  content?: unknown;
  @ApiPropertyOptional() @IsOptional() @IsArray() tool_calls?: unknown[];
  @ApiPropertyOptional() @IsOptional() @IsString() tool_call_id?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() name?: string;
  @ApiPropertyOptional({
    description:
      "The model provider's id of the response this message belongs to (the conversation's " +
      'request_id); never sent back to a provider',
  })
  @IsOptional()
  @IsString()
  @MaxLength(256)
  request_id?: string;
}

@ApiSchema({ name: 'RecordMessagesRequest' })
export class RecordMessagesDto {
  @ApiProperty({ type: [ChatMessageDto] })
  @IsArray()
  @ArrayMaxSize(100)
  @ValidateNestedEach()
  @Type(() => ChatMessageDto)
  messages: ChatMessageDto[];
}

@ApiSchema({ name: 'TakeFollowupsResponse' })
export class FollowupsResponseDto {
  @ApiProperty({ type: [String] }) messages: string[];
}

@ApiSchema({ name: 'AppendEventRequest' })
export class AppendEventDto {
  @ApiProperty({ description: 'lower_snake_case; the lifecycle events are the server’s own' })
  @IsString()
  @Matches(/^(?!oz_run_|agent_started$)[a-z][a-z0-9_]{0,47}$/, {
    message: 'must be lower_snake_case (at most 48 characters) and not a lifecycle event',
  })
  event_type: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  @IsOptional()
  @IsObject()
  payload?: Record<string, unknown>;
}

@ApiSchema({ name: 'AppendEventsItem' })
export class AppendEventsItemDto extends AppendEventDto {
  @ApiPropertyOptional({
    description:
      'How many milliseconds before the request the event happened (the server dates it by its ' +
      'own clock: the worker’s may differ); 0 when absent',
    minimum: 0,
    maximum: MAX_EVENT_AGE_MS,
  })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(MAX_EVENT_AGE_MS)
  age_ms?: number;
}

@ApiSchema({ name: 'AppendEventsRequest' })
export class AppendEventsDto {
  @ApiProperty({ type: [AppendEventsItemDto], description: 'In order; recorded all or none' })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_EVENTS_PER_WRITE)
  @ValidateNestedEach()
  @Type(() => AppendEventsItemDto)
  events: AppendEventsItemDto[];
}

@ApiSchema({ name: 'HarnessTokenUsage' })
export class TokenUsageDto implements UsageReport {
  @ApiProperty() @IsInt() @Min(0) prompt_tokens: number;
  @ApiProperty() @IsInt() @Min(0) completion_tokens: number;
  @ApiProperty() @IsInt() @Min(0) model_calls: number;
}

/** The Oz FinishTaskRequest, plus the error code and token usage of the execution. */
@ApiSchema({ name: 'FinishTaskRequest' })
export class FinishTaskDto implements FinishReport {
  @ApiProperty({ description: 'Whether the task completed successfully' })
  @IsBoolean()
  success: boolean;

  @ApiProperty({ description: 'What was accomplished, or why it failed' })
  @IsString()
  @MaxLength(200_000)
  summary: string;

  @ApiPropertyOptional({ enum: Object.keys(ERROR_CODES), description: 'When success is false' })
  @IsOptional()
  @IsIn(Object.keys(ERROR_CODES))
  error_code?: keyof typeof ERROR_CODES;

  @ApiPropertyOptional({ type: TokenUsageDto })
  @IsOptional()
  @ValidateNestedObject()
  @Type(() => TokenUsageDto)
  usage?: TokenUsageDto;

  @ApiPropertyOptional({
    description:
      "The harness's own raw event stream (a vendor CLI's JSONL stdout), kept as this " +
      "execution's transcript instead of its recorded messages",
  })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_RAW_TRANSCRIPT_CHARS)
  raw_transcript?: string;
}

@ApiSchema({ name: 'FinishTaskResponse' })
export class FinishTaskResponseDto {
  @ApiProperty({ description: 'The state the run is in now' }) state: string;
}
