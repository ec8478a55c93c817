import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { EnvironmentConfigDto } from '../../environments';
import { AgentConfigDto } from '../../run-config';
import { ScopeDto, UserProfileDto } from '../../teams';

@ApiSchema({ name: 'ScheduledAgentHistoryItem' })
export class ScheduleHistoryDto {
  @ApiProperty({ format: 'date-time', nullable: true, type: String })
  last_ran: string | null;

  @ApiProperty({
    format: 'date-time',
    nullable: true,
    type: String,
    description: 'null when paused',
  })
  next_run: string | null;
}

@ApiSchema({ name: 'ScheduledAgentItem' })
export class ScheduledAgentItemDto {
  @ApiProperty() id: string;
  @ApiProperty() name: string;
  @ApiProperty({ description: 'Cron expression, evaluated in UTC' }) cron_schedule: string;
  @ApiProperty() enabled: boolean;
  @ApiProperty({ description: '"" when the schedule runs a skill without a prompt' })
  prompt: string;
  @ApiProperty({ type: AgentConfigDto }) agent_config: AgentConfigDto;
  @ApiPropertyOptional({
    type: EnvironmentConfigDto,
    description:
      'Resolved environment configuration (if agent_config references an environment_id the ' +
      "schedule's team can see)",
  })
  environment?: EnvironmentConfigDto;
  @ApiPropertyOptional() agent_uid?: string;
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' } })
  metadata?: Record<string, string>;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
  @ApiPropertyOptional({ type: UserProfileDto }) created_by?: UserProfileDto;
  @ApiPropertyOptional({ type: UserProfileDto }) updated_by?: UserProfileDto;
  @ApiProperty({ type: ScheduleHistoryDto }) history: ScheduleHistoryDto;

  @ApiProperty({
    nullable: true,
    type: String,
    description:
      'Why the last tick did not produce a run normally (refused, missed); null if it did',
  })
  last_spawn_error: string | null;

  @ApiProperty({ type: ScopeDto }) scope: ScopeDto;
}

@ApiSchema({ name: 'ListScheduledAgentsResponse' })
export class ListSchedulesResponseDto {
  @ApiProperty({ type: [ScheduledAgentItemDto], description: 'Sorted by name' })
  schedules: ScheduledAgentItemDto[];
}

@ApiSchema({ name: 'DeleteScheduledAgentResponse' })
export class DeleteScheduleResponseDto {
  @ApiProperty() success: boolean;
}
