import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Matches, MaxLength, MinLength } from 'class-validator';
import { toRfc3339 } from '../../../common/time';
import { TEAM_ROLES, TeamRole } from '../../../common/auth/roles';
import type { ApiKey } from '../api-key.entity';

@ApiSchema({ name: 'CreateApiKeyRequest', description: 'A new team API key' })
export class CreateApiKeyDto {
  @ApiProperty({ description: 'A label to recognise the key by', minLength: 1, maxLength: 128 })
  @IsString()
  @MinLength(1)
  @MaxLength(128)
  @Matches(/\S/, { message: 'must not be blank' })
  name: string;

  @ApiProperty({ enum: TEAM_ROLES, description: 'What the key may do' })
  @IsIn(TEAM_ROLES)
  role: TeamRole;

  @ApiPropertyOptional({
    format: 'date-time',
    description: 'When the key stops authenticating (RFC 3339, in the future); never by default',
  })
  @IsOptional()
  @IsString()
  expires_at?: string;
}

@ApiSchema({ name: 'ApiKey', description: 'A team API key; its secret is never returned' })
export class ApiKeyDto {
  @ApiProperty() id: string;
  @ApiProperty() name: string;
  @ApiProperty({ enum: TEAM_ROLES }) role: TeamRole;
  @ApiProperty({ description: 'Public lookup prefix of the key (never the secret)' })
  prefix: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) last_used_at: string | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) expires_at: string | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) revoked_at: string | null;
}

@ApiSchema({ name: 'CreatedApiKey' })
export class CreatedApiKeyDto extends ApiKeyDto {
  @ApiProperty({ description: 'The key itself; shown only in this response' }) key: string;
}

@ApiSchema({ name: 'ListApiKeysResponse' })
export class ListApiKeysResponseDto {
  @ApiProperty({ type: [ApiKeyDto] }) api_keys: ApiKeyDto[];
}

/** A key of a person as the API shows it (its role: its own, `admin` for keys older than roles). */
export function toApiKeyDto(key: ApiKey): ApiKeyDto {
  return {
    id: key.id,
    name: key.name,
    role: key.role ?? 'admin',
    prefix: key.prefix,
    created_at: key.createdAt.toISOString(),
    last_used_at: toRfc3339(key.lastUsedAt),
    expires_at: toRfc3339(key.expiresAt),
    revoked_at: toRfc3339(key.revokedAt),
  };
}
