import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsOptional, IsString, Matches, MaxLength, MinLength } from 'class-validator';

export const SECRET_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
export const MAX_SECRET_VALUE_BYTES = 128 * 1024;

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
}

@ApiSchema({ name: 'UpdateSecretRequest' })
export class UpdateSecretDto {
  @ApiProperty({ description: 'The new value (at most 128 KiB); never returned' })
  @IsString()
  @MinLength(1)
  value: string;

  @ApiPropertyOptional({ maxLength: 512 })
  @IsOptional()
  @IsString()
  @MaxLength(512)
  description?: string;
}

@ApiSchema({ name: 'TeamSecret', description: 'A team secret; its value is never returned' })
export class SecretDto {
  @ApiProperty() name: string;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}

@ApiSchema({ name: 'ListSecretsResponse' })
export class ListSecretsResponseDto {
  @ApiProperty({ type: [SecretDto] }) secrets: SecretDto[];
}
