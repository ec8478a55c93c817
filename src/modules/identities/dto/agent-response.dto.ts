import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import type { JsonObject } from '../../../common/json';
import {
  ApprovalRuleDto,
  HarnessAuthSecretsDto,
  HarnessDto,
  MemoryStoreRefDto,
  SecretRefDto,
} from '../../run-config';
import type { ApprovalRule } from '../../run-config';
import { AMBIENT_EXTENSION } from '../../../common/openapi-extension';
import { AGENT_TYPES } from '../agent-settings';

@ApiSchema({ name: 'AutoMemoryResponse' })
export class AutoMemoryResponseDto {
  @ApiProperty() enabled: boolean;
}

@ApiSchema({ name: 'MemoryResponse' })
export class MemoryResponseDto {
  @ApiProperty({ type: [MemoryStoreRefDto] }) attached_stores: MemoryStoreRefDto[];
  @ApiProperty({ type: AutoMemoryResponseDto }) auto_memory: AutoMemoryResponseDto;
}

@ApiSchema({ name: 'AgentResponse' })
export class AgentResponseDto {
  @ApiProperty() uid: string;
  @ApiProperty() name: string;
  @ApiPropertyOptional({ nullable: true, type: String }) description?: string | null;

  @ApiProperty({ description: "Within the team's plan limit (oldest agents first), so usable" })
  available: boolean;

  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
  @ApiProperty({ description: '"" when unset' }) default_runner_uid: string;
  @ApiProperty({ type: MemoryResponseDto }) memory: MemoryResponseDto;
  @ApiProperty({ type: [SecretRefDto] }) secrets: SecretRefDto[];
  @ApiProperty({ type: [String] }) skills: string[];
  @ApiPropertyOptional({ nullable: true, type: String }) prompt?: string | null;
  @ApiPropertyOptional({ enum: AGENT_TYPES }) agent_type?: string;
  @ApiPropertyOptional({ deprecated: true }) base_harness?: string;
  @ApiPropertyOptional() base_model?: string;
  @ApiPropertyOptional({ enum: ['CREATOR', 'EXECUTOR'] }) credential_strategy?: string;
  @ApiPropertyOptional() environment_id?: string;
  @ApiPropertyOptional({ nullable: true, type: String }) factory_uid?: string | null;
  @ApiPropertyOptional({ type: HarnessDto }) harness?: HarnessDto;
  @ApiPropertyOptional({ type: HarnessAuthSecretsDto })
  harness_auth_secrets?: HarnessAuthSecretsDto;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  inference_providers?: JsonObject;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { $ref: '#/components/schemas/MCPServerConfig' },
  })
  mcp_servers?: JsonObject;
  @ApiPropertyOptional() on_behalf_of_enabled?: boolean;
  @ApiPropertyOptional() worker_host?: string;
  @ApiPropertyOptional({
    ...AMBIENT_EXTENSION,
    type: [ApprovalRuleDto],
    description: 'Ambient extension: the approval rules of its runs (absent: none)',
  })
  approvals?: ApprovalRule[];
  @ApiPropertyOptional({
    ...AMBIENT_EXTENSION,
    type: [String],
    description:
      "Ambient extension: who besides admins may decide its runs' approval requests (absent: any member)",
  })
  approvers?: string[];
}

@ApiSchema({ name: 'ListAgentIdentitiesResponse' })
export class ListAgentIdentitiesResponseDto {
  @ApiProperty({ type: [AgentResponseDto] }) agents: AgentResponseDto[];
}

@ApiSchema({ name: 'AgentApiKey' })
export class IdentityApiKeyDto {
  @ApiProperty() id: string;
  @ApiProperty() name: string;
  @ApiProperty({ description: 'Public lookup prefix of the key (never the secret)' })
  prefix: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) last_used_at: string | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) revoked_at: string | null;
}

@ApiSchema({ name: 'CreatedAgentApiKey' })
export class CreatedIdentityApiKeyDto extends IdentityApiKeyDto {
  @ApiProperty({ description: 'The key itself; shown only in this response' }) key: string;
}

@ApiSchema({ name: 'ListAgentApiKeysResponse' })
export class ListIdentityApiKeysResponseDto {
  @ApiProperty({ type: [IdentityApiKeyDto] }) api_keys: IdentityApiKeyDto[];
}
