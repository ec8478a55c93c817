import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  ValidateIf,
} from 'class-validator';
import type { JsonObject } from '../../../common/json';
import {
  approvalsProperty,
  HarnessAuthSecretsDto,
  HarnessDto,
  IsApprovalRules,
  McpServerConfigDto,
  MemoryStoreRefDto,
  SecretRefDto,
} from '../../run-config';
import type { ApprovalRule } from '../../run-config';
import { AMBIENT_EXTENSION } from '../../../common/openapi-extension';
import { IsApprovers, MAX_APPROVERS } from '../agent-approvers';
import { AGENT_TYPES, AgentType } from '../agent-settings';
import { ValidateNestedEach, ValidateNestedObject } from '../../../common/errors/validation';

const MAX_LIST = 100;

@ApiSchema({ name: 'AutoMemoryRequest' })
export class AutoMemoryInputDto {
  @ApiPropertyOptional({ type: Boolean, nullable: true, default: true })
  @IsOptional()
  @IsBoolean()
  enabled?: boolean | null;
}

@ApiSchema({ name: 'MemoryRequest' })
export class MemoryInputDto {
  @ApiPropertyOptional({ type: [MemoryStoreRefDto], nullable: true })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_LIST)
  @ValidateNestedEach()
  @Type(() => MemoryStoreRefDto)
  attached_stores?: MemoryStoreRefDto[] | null;

  @ApiPropertyOptional({ type: AutoMemoryInputDto, nullable: true })
  @IsOptional()
  @ValidateNestedObject()
  @Type(() => AutoMemoryInputDto)
  auto_memory?: AutoMemoryInputDto | null;
}

/** The optional agent fields, shared by create and update. */
export class AgentFieldsDto {
  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 2000 })
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  description?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: 100_000,
    description: 'Base prompt for the runs it executes',
  })
  @IsOptional()
  @IsString()
  @MaxLength(100_000)
  prompt?: string | null;

  @ApiPropertyOptional({ enum: AGENT_TYPES, nullable: true })
  @IsOptional()
  @IsIn(AGENT_TYPES)
  agent_type?: AgentType | null;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 32, deprecated: true })
  @IsOptional()
  @IsString()
  @MaxLength(32)
  base_harness?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: 128,
    description: 'Model for its runs unless the run names one',
  })
  @IsOptional()
  @IsString()
  @MaxLength(128)
  base_model?: string | null;

  @ApiPropertyOptional({ enum: ['CREATOR', 'EXECUTOR'], nullable: true })
  @IsOptional()
  @IsIn(['CREATOR', 'EXECUTOR'])
  credential_strategy?: 'CREATOR' | 'EXECUTOR' | null;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 64 })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  default_runner_uid?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    pattern: '^[A-Za-z0-9]{22}$',
    description: '22 characters of [A-Za-z0-9]; empty clears it',
  })
  @ValidateIf((_o, value) => value !== undefined && value !== null && value !== '')
  @Matches(/^[A-Za-z0-9]{22}$/, { message: 'must be 22 characters of [A-Za-z0-9]' })
  environment_id?: string | null;

  @ApiPropertyOptional({ type: HarnessDto, nullable: true })
  @IsOptional()
  @ValidateNestedObject()
  @Type(() => HarnessDto)
  harness?: HarnessDto | null;

  @ApiPropertyOptional({ type: HarnessAuthSecretsDto, nullable: true })
  @IsOptional()
  @ValidateNestedObject()
  @Type(() => HarnessAuthSecretsDto)
  harness_auth_secrets?: HarnessAuthSecretsDto | null;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, nullable: true })
  @IsOptional()
  @IsObject()
  inference_providers?: JsonObject | null;

  @ApiPropertyOptional({
    type: 'object',
    nullable: true,
    additionalProperties: { $ref: '#/components/schemas/MCPServerConfig' },
  })
  @IsOptional()
  @IsObject()
  mcp_servers?: Record<string, McpServerConfigDto> | null;

  @ApiPropertyOptional({ type: MemoryInputDto, nullable: true })
  @IsOptional()
  @ValidateNestedObject()
  @Type(() => MemoryInputDto)
  memory?: MemoryInputDto | null;

  @ApiPropertyOptional({ type: Boolean, nullable: true, description: 'Admins only' })
  @IsOptional()
  @IsBoolean()
  on_behalf_of_enabled?: boolean | null;

  @ApiPropertyOptional({
    type: [SecretRefDto],
    nullable: true,
    maxItems: MAX_LIST,
    description: 'Duplicate names are refused',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_LIST)
  @ValidateNestedEach()
  @Type(() => SecretRefDto)
  secrets?: SecretRefDto[] | null;

  @ApiPropertyOptional({
    type: [String],
    nullable: true,
    maxItems: MAX_LIST,
    example: ['owner/repo:.agents/skills/deploy/SKILL.md'],
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_LIST)
  @IsString({ each: true })
  @MaxLength(512, { each: true })
  skills?: string[] | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: 128,
    description: 'Self-hosted worker id; unset or "warp" = service-hosted',
  })
  @IsOptional()
  @IsString()
  @MaxLength(128)
  worker_host?: string | null;

  @ApiPropertyOptional(
    approvalsProperty('approval rules of every run this agent executes; [] clears them.', true),
  )
  @IsOptional()
  @IsApprovalRules()
  approvals?: ApprovalRule[] | null;

  @ApiPropertyOptional({
    ...AMBIENT_EXTENSION,
    type: [String],
    nullable: true,
    maxItems: MAX_APPROVERS,
    example: ['lead@example.com'],
    description:
      "Ambient extension: who may decide the approval requests of this agent's runs, by user " +
      'id or e-mail; team admins always may. Unset or [] = any member or admin',
  })
  @IsOptional()
  @IsApprovers()
  approvers?: string[] | null;
}

@ApiSchema({ name: 'CreateAgentRequest' })
export class CreateAgentDto extends AgentFieldsDto {
  @ApiProperty({ type: String, maxLength: 255, description: 'A name for the agent' })
  @IsString()
  @MaxLength(255)
  name: string;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 64 })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  factory_uid?: string | null;
}

/**
 * A partial update: an omitted or null field stays unchanged, an empty value clears it, a
 * non-empty one replaces it. `secrets_append` must be sent alone.
 */
@ApiSchema({ name: 'UpdateAgentRequest' })
export class UpdateAgentDto extends AgentFieldsDto {
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: 255,
    description: 'The new name for the agent',
  })
  @IsOptional()
  @IsString()
  @MaxLength(255)
  name?: string | null;

  @ApiPropertyOptional({
    type: [SecretRefDto],
    maxItems: MAX_LIST,
    description: 'Secrets to add; send it alone',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_LIST)
  @ValidateNestedEach()
  @Type(() => SecretRefDto)
  secrets_append?: SecretRefDto[] | null;
}

@ApiSchema({ name: 'CreateAgentApiKeyRequest' })
export class CreateIdentityApiKeyDto {
  @ApiPropertyOptional({ description: 'A label to recognise the key by', default: 'api' })
  @IsOptional()
  @IsString()
  @MaxLength(128)
  name?: string;
}
