import { PageInfoDto } from '../../../common/page-info.dto';
import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { ERROR_CODES } from '../../../common/errors/error-codes';
import { RUN_SOURCES, RUN_STATES } from '../run-state';
import { AgentConfigDto } from '../../run-config';
import { AMBIENT_EXTENSION } from '../../../common/openapi-extension';
import { ScopeDto, UserProfileDto } from '../../teams';

@ApiSchema({ name: 'RunStatusMessage' })
export class StatusMessageDto {
  @ApiProperty() message: string;
  @ApiPropertyOptional({ enum: Object.keys(ERROR_CODES), enumName: 'PlatformErrorCode' })
  error_code?: string;
  @ApiPropertyOptional() retryable?: boolean;
  @ApiPropertyOptional({ format: 'date-time' }) session_debug_until?: string;
  @ApiPropertyOptional({
    ...AMBIENT_EXTENSION,
    description: 'True while a debug agent works in the kept workspace',
  })
  debug_agent_active?: boolean;
  @ApiPropertyOptional({
    ...AMBIENT_EXTENSION,
    description:
      'BLOCKED: the id of the request the run waits on (GET /agent/runs/{runId}/approvals)',
  })
  pending_approval_id?: string;
}

@ApiSchema({ name: 'ModelTokenUsage' })
export class ModelTokenUsageDto {
  @ApiProperty() model_id: string;
  @ApiProperty() total_tokens: number;
  @ApiProperty({ enum: ['warp', 'byok', 'custom_endpoint'] }) usage_type: string;
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'integer' } })
  tokens_by_category?: Record<string, number>;
}

@ApiSchema({ name: 'RequestUsage' })
export class RequestUsageDto {
  @ApiPropertyOptional() inference_cost?: number;
  @ApiPropertyOptional() compute_cost?: number;
  @ApiPropertyOptional() inference_cost_usd?: number;
  @ApiPropertyOptional() compute_cost_usd?: number;
  @ApiPropertyOptional() total_tokens?: number;
  @ApiPropertyOptional({ type: [ModelTokenUsageDto] }) model_token_usage?: ModelTokenUsageDto[];
}

@ApiSchema({ name: 'ScheduleInfo' })
export class ScheduleInfoDto {
  @ApiProperty() schedule_id: string;
  @ApiProperty() schedule_name: string;
  @ApiProperty() cron_schedule: string;
}

@ApiSchema({ name: 'AgentSkill' })
export class AgentSkillDto {
  @ApiPropertyOptional() name?: string;
  @ApiPropertyOptional() description?: string;
  @ApiPropertyOptional() full_path?: string;
  @ApiPropertyOptional() bundled_skill_id?: string;
}

@ApiSchema({ name: 'ArtifactItem' })
export class ArtifactItemDto {
  @ApiProperty({ enum: ['PLAN', 'PULL_REQUEST', 'SCREENSHOT', 'FILE', 'EXTERNAL_REFERENCE'] })
  artifact_type: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ type: 'object', additionalProperties: true }) data: Record<string, unknown>;
}

@ApiSchema({ name: 'RunItem' })
export class RunItemDto {
  @ApiProperty() run_id: string;
  @ApiProperty({ deprecated: true }) task_id: string;
  @ApiProperty() root_run_id: string;
  @ApiProperty() title: string;
  @ApiProperty({ enum: RUN_STATES, enumName: 'RunState' }) state: string;
  @ApiProperty() prompt: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) started_at: string | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) finished_at: string | null;
  @ApiPropertyOptional({ enum: ['LOCAL', 'REMOTE'], enumName: 'RunExecutionLocation' })
  execution_location?: string;
  @ApiPropertyOptional({ enum: RUN_SOURCES, enumName: 'RunSourceType' }) source?: string;
  @ApiPropertyOptional({ type: StatusMessageDto }) status_message?: StatusMessageDto;
  @ApiPropertyOptional({ type: ScheduleInfoDto }) schedule?: ScheduleInfoDto;
  @ApiPropertyOptional({
    description: 'UUID of the session (in Ambient the run id, once an execution started)',
  })
  session_id?: string;
  @ApiPropertyOptional({
    format: 'uri',
    description: 'URL to view the agent session (until Ambient has a web console: the run API URL)',
  })
  session_link?: string;
  @ApiPropertyOptional({
    format: 'uri',
    description:
      'URL to the run trigger: the schedule of a scheduled run, the custom webhook of a webhook ' +
      'run, the parent of a child run (API URLs); absent for runs started directly',
  })
  trigger_url?: string;
  @ApiPropertyOptional({ type: UserProfileDto }) creator?: UserProfileDto;
  @ApiPropertyOptional({ type: UserProfileDto }) executor?: UserProfileDto;
  @ApiPropertyOptional({ type: RequestUsageDto }) request_usage?: RequestUsageDto;
  @ApiPropertyOptional({ type: AgentConfigDto }) agent_config?: AgentConfigDto;
  @ApiPropertyOptional() conversation_id?: string;
  @ApiPropertyOptional() parent_run_id?: string;
  @ApiPropertyOptional() is_sandbox_running?: boolean;
  @ApiPropertyOptional() is_run_type_cancellable?: boolean;
  @ApiPropertyOptional({ type: [ArtifactItemDto] }) artifacts?: ArtifactItemDto[];
  @ApiPropertyOptional({ type: AgentSkillDto }) agent_skill?: AgentSkillDto;
  @ApiPropertyOptional({ type: ScopeDto }) scope?: ScopeDto;
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' } })
  metadata?: Record<string, string>;
  @ApiPropertyOptional({
    description:
      'ISO-8601 duration, e.g. PT2M30S (to the millisecond, e.g. PT0.884S): how long the ' +
      "run's executions ran, the running one until now. The time between executions (before a " +
      'follow-up, BLOCKED on a person, QUEUED for a slot) does not count. Absent before the ' +
      'first execution',
  })
  run_time?: string;
  @ApiPropertyOptional({
    ...AMBIENT_EXTENSION,
    type: 'integer',
    description:
      'How many executions the run has had (its first, each follow-up or resumption, and each ' +
      'retry after a lost worker); absent before the first',
  })
  executions?: number;
  @ApiPropertyOptional({
    ...AMBIENT_EXTENSION,
    description:
      'True while the run waits QUEUED because a concurrency limit (max_concurrent_runs of its ' +
      'team or agent) is full: it starts as soon as a slot frees',
  })
  at_capacity?: boolean;
  @ApiPropertyOptional({
    description:
      'True while the run is FAILED with environment_setup_failed and its workspace is kept for ' +
      'debugging (until status_message.session_debug_until): a follow-up starts a debug agent',
  })
  debug_agent_available?: boolean;
}

@ApiSchema({ name: 'ListRunsResponse' })
export class ListRunsResponseDto {
  @ApiProperty({ type: [RunItemDto] }) runs: RunItemDto[];
  @ApiProperty({ type: PageInfoDto }) page_info: PageInfoDto;
}

export const TIMELINE_EVENT_TYPES = [
  'oz_run_created',
  'oz_run_claimed',
  'worker_container_ready',
  'shared_session_started',
  'agent_started',
  'oz_run_done',
  'oz_run_blocked',
  'oz_run_cancelled',
  'oz_run_failed',
  'oz_run_errored',
  'vm_shutdown',
] as const;

@ApiSchema({ name: 'TimelineEvent' })
export class TimelineEventDto {
  @ApiProperty({ enum: TIMELINE_EVENT_TYPES }) event_type: string;
  @ApiProperty() event_uuid: string;
  @ApiProperty({ format: 'date-time' }) occurred_at: string;
  @ApiProperty() run_id: string;
  @ApiPropertyOptional({ type: 'integer' }) execution_id?: number;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  payload?: Record<string, unknown>;
}

@ApiSchema({ name: 'RunTimelineResponse' })
export class TimelineResponseDto {
  @ApiProperty({ type: [TimelineEventDto] }) events: TimelineEventDto[];
}

@ApiSchema({ name: 'RunByExternalReferenceResponse' })
export class RunByExternalReferenceResponseDto {
  @ApiProperty() run_id: string;
}
