import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsOptional, IsString } from 'class-validator';

const toBool = ({ value }: { value: unknown }) =>
  value === 'true' ? true : value === 'false' ? false : value;

export class ListSkillsQueryDto {
  @ApiPropertyOptional({ description: '"owner/repo": only skills of this repository' })
  @IsOptional()
  @IsString()
  repo?: string;

  @ApiPropertyOptional({ description: 'Clear the cached repository checkouts first' })
  @IsOptional()
  @Transform(toBool)
  @IsBoolean()
  refresh?: boolean;

  @ApiPropertyOptional({ enum: ['name', 'last_run'], default: 'name' })
  @IsOptional()
  @IsIn(['name', 'last_run'])
  sort_by?: 'name' | 'last_run';

  @ApiPropertyOptional({ description: 'Also list SKILL.md files that cannot be parsed' })
  @IsOptional()
  @Transform(toBool)
  @IsBoolean()
  include_malformed_skills?: boolean;
}

@ApiSchema({ name: 'AgentListSource' })
export class SkillSourceDto {
  @ApiProperty() owner: string;
  @ApiProperty() name: string;
  @ApiProperty() skill_path: string;
}

@ApiSchema({ name: 'AgentListEnvironment' })
export class SkillEnvironmentDto {
  @ApiProperty() uid: string;
  @ApiProperty() name: string;
}

@ApiSchema({ name: 'AgentListVariant' })
export class SkillVariantDto {
  /** Internal grouping key; not serialized. */
  name: string;
  @ApiProperty({ description: '"{owner}/{repo}:{skill_path}"' }) id: string;
  @ApiProperty() description: string;
  @ApiProperty() base_prompt: string;
  @ApiProperty({ type: SkillSourceDto }) source: SkillSourceDto;
  @ApiProperty({ type: [SkillEnvironmentDto] }) environments: SkillEnvironmentDto[];
  @ApiPropertyOptional({ format: 'date-time', nullable: true, type: String })
  last_run_timestamp: string | null;
  @ApiPropertyOptional({ description: 'Why the skill is malformed (include_malformed_skills)' })
  error?: string;
}

@ApiSchema({ name: 'AgentListItem' })
export class AgentSkillDto {
  @ApiProperty() name: string;
  @ApiProperty({ type: [SkillVariantDto] }) variants: Omit<SkillVariantDto, 'name'>[];
}

@ApiSchema({ name: 'ListAgentsResponse' })
export class ListAgentsResponseDto {
  @ApiProperty({ type: [AgentSkillDto] }) agents: AgentSkillDto[];
}
