import { ApiProperty, ApiPropertyOptional, ApiPropertyOptions, ApiSchema } from '@nestjs/swagger';
import type { JsonObject } from '../../common/json';
import type { McpSecretValue } from './run-config.types';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import { AMBIENT_EXTENSION } from '../../common/openapi-extension';
import { registryEnum } from '../../common/registry/registry-openapi';
import { ValidateNestedEach, ValidateNestedObject } from '../../common/errors/validation';
import { IsHostPatterns } from './egress-validators';
import { approvalsProperty } from './approval-rule.dto';
import { IsApprovalRules } from './approval-validators';
import type { ApprovalRule } from './approval-rules';

/** Hosts one secret may be bound to. */
const MAX_INJECT_HOSTS = 20;

@ApiSchema({ name: 'Harness' })
export class HarnessDto {
  /** Checked against the harness registry by the services that accept a config. */
  @ApiPropertyOptional(registryEnum('harness_type'))
  @IsOptional()
  @IsString()
  @MaxLength(64)
  type?: string;

  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(128) model_id?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(32) reasoning_level?: string;
}

@ApiSchema({ name: 'HarnessAuthSecrets' })
export class HarnessAuthSecretsDto {
  @ApiPropertyOptional() @IsOptional() @IsString() claude_auth_secret_name?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() codex_auth_secret_name?: string;
  @ApiPropertyOptional({
    ...AMBIENT_EXTENSION,
    description: 'Ambient extension: team secret for the gemini harness',
  })
  @IsOptional()
  @IsString()
  gemini_auth_secret_name?: string;
}

@ApiSchema({ name: 'SecretRef' })
export class SecretRefDto {
  @ApiPropertyOptional() @IsString() @IsNotEmpty() @MaxLength(128) name: string;

  @ApiPropertyOptional({
    ...AMBIENT_EXTENSION,
    type: [String],
    maxItems: MAX_INJECT_HOSTS,
    example: ['api.github.com', 'github.com'],
    description:
      'Ambient extension: binds the secret to these hosts (`host`, `host:port`, `*.suffix`). ' +
      "The sandbox's variable then holds a placeholder, and the egress proxy puts the value in " +
      'its place in requests to these hosts only; the value never enters the sandbox',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_INJECT_HOSTS)
  @IsHostPatterns()
  inject_hosts?: string[];
}

@ApiSchema({ name: 'MemoryStoreRef' })
export class MemoryStoreRefDto {
  @ApiPropertyOptional() @IsString() @IsNotEmpty() uid: string;
  @ApiPropertyOptional({ enum: ['read_write', 'read_only'] })
  @IsIn(['read_write', 'read_only'])
  access: string;
  @ApiPropertyOptional() @IsString() @IsNotEmpty() instructions: string;
}

@ApiSchema({ name: 'SessionSharingConfig' })
export class SessionSharingDto {
  @ApiPropertyOptional({ enum: ['VIEWER', 'EDITOR'] })
  @IsOptional()
  @IsIn(['VIEWER', 'EDITOR'])
  public_access?: 'VIEWER' | 'EDITOR';
}

@ApiSchema({ name: 'MCPSecretReference' })
export class McpSecretReferenceDto {
  @ApiProperty({
    description: 'Name of a team secret (POST /secrets); its value is used when the run executes',
    example: 'LINEAR_TOKEN',
  })
  secret: string;
}

/** A value of `env`/`headers`: a literal string, or (Ambient extension) a team secret reference. */
const MCP_SECRET_VALUE: ApiPropertyOptions = {
  type: 'object',
  additionalProperties: {
    oneOf: [{ type: 'string' }, { $ref: '#/components/schemas/MCPSecretReference' }],
  },
  description:
    'Values are secrets: stored encrypted and returned masked ("***", or "<secret:NAME>" for a ' +
    'team secret reference). Sending a masked value back keeps the stored one while the ' +
    "server's destination (url origin; command and args) is unchanged, else 400.",
};

@ApiSchema({ name: 'MCPServerConfig' })
export class McpServerConfigDto {
  @ApiPropertyOptional() warp_id?: string;
  @ApiPropertyOptional() command?: string;
  @ApiPropertyOptional({ type: [String] }) args?: string[];
  @ApiPropertyOptional({ format: 'uri' }) url?: string;
  @ApiPropertyOptional(MCP_SECRET_VALUE)
  env?: Record<string, McpSecretValue>;
  @ApiPropertyOptional(MCP_SECRET_VALUE)
  headers?: Record<string, McpSecretValue>;
}

/** The Oz AgentConfigSnapshot (`AmbientAgentConfig` in older SDKs). Every field is optional. */
@ApiSchema({ name: 'AmbientAgentConfig' })
export class AgentConfigDto {
  @ApiPropertyOptional({
    description: 'Label for grouping and filtering (defaults to the skill name)',
  })
  @IsOptional()
  @IsString()
  @MaxLength(255)
  name?: string;

  @ApiPropertyOptional({ description: 'Model to use (GET /agent/models); team default if unset' })
  @IsOptional()
  @IsString()
  @MaxLength(128)
  model_id?: string;

  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(100_000) base_prompt?: string;

  @ApiPropertyOptional({ description: 'UID of the environment (22 characters of [A-Za-z0-9])' })
  @IsOptional()
  @Matches(/^[A-Za-z0-9]{22}$/, { message: 'must be 22 characters of [A-Za-z0-9]' })
  environment_id?: string;

  @ApiPropertyOptional({ example: 'owner/repo:.agents/skills/deploy/SKILL.md' })
  @IsOptional()
  @IsString()
  @MaxLength(512)
  skill_spec?: string;

  @ApiPropertyOptional({ type: [String] })
  @IsOptional()
  @IsArray()
  @IsString({ each: true })
  skills?: string[];

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { $ref: '#/components/schemas/MCPServerConfig' },
  })
  @IsOptional()
  @IsObject()
  mcp_servers?: Record<string, McpServerConfigDto>;

  @ApiPropertyOptional() @IsOptional() @IsBoolean() computer_use_enabled?: boolean;
  @ApiPropertyOptional() @IsOptional() @IsString() computer_use_model_id?: string;

  @ApiPropertyOptional({ enum: ['CREATOR', 'EXECUTOR'], nullable: true })
  @IsOptional()
  @IsIn(['CREATOR', 'EXECUTOR'])
  credential_strategy?: 'CREATOR' | 'EXECUTOR' | null;

  @ApiPropertyOptional({ minimum: 0, maximum: 60 })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(60)
  idle_timeout_minutes?: number;

  @ApiPropertyOptional({ description: 'Self-hosted worker id; unset or "warp" = service-hosted' })
  @IsOptional()
  @IsString()
  @MaxLength(128)
  worker_host?: string;

  @ApiPropertyOptional({ type: HarnessDto })
  @IsOptional()
  @ValidateNestedObject()
  @Type(() => HarnessDto)
  harness?: HarnessDto;

  @ApiPropertyOptional({ type: HarnessAuthSecretsDto })
  @IsOptional()
  @ValidateNestedObject()
  @Type(() => HarnessAuthSecretsDto)
  harness_auth_secrets?: HarnessAuthSecretsDto;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  @IsOptional()
  @IsObject()
  inference_providers?: JsonObject;

  @ApiPropertyOptional({ type: [MemoryStoreRefDto] })
  @IsOptional()
  @IsArray()
  @ValidateNestedEach()
  @Type(() => MemoryStoreRefDto)
  memory_stores?: MemoryStoreRefDto[];

  @ApiPropertyOptional() @IsOptional() @IsString() runner_id?: string;

  @ApiPropertyOptional({ type: [SecretRefDto] })
  @IsOptional()
  @IsArray()
  @ValidateNestedEach()
  @Type(() => SecretRefDto)
  secrets?: SecretRefDto[];

  @ApiPropertyOptional({ type: SessionSharingDto })
  @IsOptional()
  @ValidateNestedObject()
  @Type(() => SessionSharingDto)
  session_sharing?: SessionSharingDto;

  @ApiPropertyOptional(
    approvalsProperty(
      "approval rules this run adds to its environment's and its agent identity's; a run " +
        'can make the policy stricter, never looser.',
    ),
  )
  @IsOptional()
  @IsApprovalRules()
  approvals?: ApprovalRule[];

  @ApiPropertyOptional({
    description: 'Filled in by the server only; ignored on input',
    type: 'object',
    additionalProperties: true,
  })
  @IsOptional()
  @IsObject()
  experimental?: Record<string, string | number | boolean | null>;
}
