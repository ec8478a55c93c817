import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsBoolean, IsIn, IsObject, IsOptional, IsString, MaxLength } from 'class-validator';
import { AgentConfigDto } from '../../run-config';
import { RUN_MODES } from '../../runs';
import { ValidateNestedObject } from '../../../common/errors/validation';

/*
 * Required fields are checked by the service rather than by class-validator, so that one 400
 * names every missing field at once ("missing required field(s): name, cron_schedule").
 */

const CRON_DESCRIPTION =
  'Standard 5-field cron in UTC ("0 9 * * *"), a descriptor (@hourly, @daily, @weekly, ' +
  '@monthly, @yearly) or @every <duration> (e.g. "@every 15m")';

/** Fields a create and a full update have in common. */
class ScheduleFieldsDto {
  @ApiProperty({ description: 'Human-readable name', example: 'Daily Code Review' })
  @IsOptional()
  @IsString()
  @MaxLength(255)
  name?: string;

  @ApiProperty({ description: CRON_DESCRIPTION, example: '0 9 * * *' })
  @IsOptional()
  @IsString()
  @MaxLength(128)
  cron_schedule?: string;

  @ApiPropertyOptional({
    description: 'Required unless agent_config.skill_spec or agent_config.skills is set',
  })
  @IsOptional()
  @IsString()
  @MaxLength(200_000)
  prompt?: string;

  @ApiPropertyOptional({ type: AgentConfigDto, nullable: true })
  @IsOptional()
  @ValidateNestedObject()
  @Type(() => AgentConfigDto)
  agent_config?: AgentConfigDto | null;

  @ApiPropertyOptional({
    nullable: true,
    type: String,
    description: 'Agent identity that executes the runs (GET /agent/identities)',
  })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  agent_uid?: string | null;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    nullable: true,
    description: 'Metadata given to every run (same rules as on runs)',
  })
  @IsOptional()
  @IsObject()
  metadata?: Record<string, string> | null;

  @ApiPropertyOptional({ enum: RUN_MODES })
  @IsOptional()
  @IsIn(RUN_MODES)
  mode?: (typeof RUN_MODES)[number];
}

@ApiSchema({ name: 'CreateScheduledAgentRequest' })
export class CreateScheduleDto extends ScheduleFieldsDto {
  @ApiPropertyOptional({ default: true }) @IsOptional() @IsBoolean() enabled?: boolean;

  @ApiPropertyOptional({ description: 'Schedules are always team-owned in Ambient' })
  @IsOptional()
  @IsBoolean()
  team?: boolean;
}

/**
 * A full replace: name, cron_schedule, enabled and prompt (unless a skill is configured) are
 * required. agent_config, agent_uid, metadata and mode keep their values when omitted and are
 * cleared by null.
 */
@ApiSchema({ name: 'UpdateScheduledAgentRequest' })
export class UpdateScheduleDto extends ScheduleFieldsDto {
  @ApiProperty() @IsOptional() @IsBoolean() enabled?: boolean;
}
