import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  MinLength,
  ValidateIf,
  ValidateNested,
} from 'class-validator';

export const SECRET_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
export const MAX_SECRET_VALUE_BYTES = 128 * 1024;

const MAX_SCOPE_IDS = 100;

@ApiSchema({
  name: 'SecretScope',
  description:
    'The runs that may have the secret: those in one of `environments`, executing as one of ' +
    '`agent_identities` (uids), or fired by one of `schedules`. Omitted lists are empty.',
})
export class SecretScopeDto {
  @ApiPropertyOptional({ type: [String], maxItems: MAX_SCOPE_IDS, description: 'Environment ids' })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_SCOPE_IDS)
  @IsString({ each: true })
  environments?: string[];

  @ApiPropertyOptional({ type: [String], maxItems: MAX_SCOPE_IDS, description: 'Agent uids' })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_SCOPE_IDS)
  @IsString({ each: true })
  agent_identities?: string[];

  @ApiPropertyOptional({ type: [String], maxItems: MAX_SCOPE_IDS, description: 'Schedule ids' })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_SCOPE_IDS)
  @IsString({ each: true })
  schedules?: string[];
}

const SCOPE_DESCRIPTION =
  'Limits the runs that may name the secret (admins); omitted or null: every run of the team';

@ApiSchema({ name: 'CreateSecretRequest' })
export class CreateSecretDto {
  @ApiProperty({
    description: 'Environment-variable style name, unique in the team',
    example: 'INTERNAL_CI_WEBHOOK_SECRET',
  })
  @IsString()
  @Matches(SECRET_NAME_PATTERN, {
    message: 'must start with a letter or _ and hold only letters, digits and _ (at most 128)',
  })
  name: string;

  @ApiProperty({ description: 'The value (at most 128 KiB); never returned' })
  @IsString()
  @MinLength(1)
  value: string;

  @ApiPropertyOptional({ maxLength: 512 })
  @IsOptional()
  @IsString()
  @MaxLength(512)
  description?: string;

  @ApiPropertyOptional({ type: SecretScopeDto, nullable: true, description: SCOPE_DESCRIPTION })
  @IsOptional()
  @ValidateNested()
  @Type(() => SecretScopeDto)
  scope?: SecretScopeDto | null;
}

@ApiSchema({ name: 'UpdateSecretRequest' })
export class UpdateSecretDto {
  @ApiPropertyOptional({
    description: 'The new value (at most 128 KiB); never returned. Required unless scope is given',
  })
  // Absent means unchanged; null is not a value (IsOptional would let it through to the service).
  @ValidateIf((dto: UpdateSecretDto) => dto.value !== undefined)
  @IsString()
  @MinLength(1)
  value?: string;

  @ApiPropertyOptional({ maxLength: 512 })
  @IsOptional()
  @IsString()
  @MaxLength(512)
  description?: string;

  @ApiPropertyOptional({
    type: SecretScopeDto,
    nullable: true,
    description: `${SCOPE_DESCRIPTION}. Omitted: unchanged`,
  })
  @IsOptional()
  @ValidateNested()
  @Type(() => SecretScopeDto)
  scope?: SecretScopeDto | null;
}

@ApiSchema({ name: 'TeamSecret', description: 'A team secret; its value is never returned' })
export class SecretDto {
  @ApiProperty() name: string;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  @ApiProperty({ type: SecretScopeDto, nullable: true, description: 'null: every run may have it' })
  scope: SecretScopeDto | null;
  @ApiProperty({
    enum: ['run', 'webhook'],
    description: '`webhook`: a webhook signing secret or URL token, which runs never get',
  })
  purpose: 'run' | 'webhook';
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}

@ApiSchema({ name: 'ListSecretsResponse' })
export class ListSecretsResponseDto {
  @ApiProperty({ type: [SecretDto] }) secrets: SecretDto[];
}
