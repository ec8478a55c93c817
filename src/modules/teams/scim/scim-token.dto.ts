import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { IsString, Matches, MaxLength, MinLength } from 'class-validator';
import { toRfc3339 } from '../../../common/time';
import type { ScimToken } from './scim-token.entity';

@ApiSchema({
  name: 'CreateScimTokenRequest',
  description: "A new token for the team's SCIM client",
})
export class CreateScimTokenDto {
  @ApiProperty({
    description: 'A label to recognise the token by (e.g. the identity provider)',
    minLength: 1,
    maxLength: 128,
  })
  @IsString()
  @MinLength(1)
  @MaxLength(128)
  @Matches(/\S/, { message: 'must not be blank' })
  name: string;
}

@ApiSchema({ name: 'ScimToken', description: 'A SCIM bearer token; its secret is never returned' })
export class ScimTokenDto {
  @ApiProperty() id: string;
  @ApiProperty() name: string;
  @ApiProperty({ description: 'Public lookup prefix of the token (never the secret)' })
  prefix: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) last_used_at: string | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) revoked_at: string | null;
}

@ApiSchema({ name: 'CreatedScimToken' })
export class CreatedScimTokenDto extends ScimTokenDto {
  @ApiProperty({ description: 'The token itself; shown only in this response' }) token: string;
  @ApiProperty({ description: 'The SCIM base URL to give the identity provider' })
  scim_base_url: string;
}

@ApiSchema({ name: 'ListScimTokensResponse' })
export class ListScimTokensResponseDto {
  @ApiProperty({ type: [ScimTokenDto] }) scim_tokens: ScimTokenDto[];
}

export function toScimTokenDto(token: ScimToken): ScimTokenDto {
  return {
    id: token.id,
    name: token.name,
    prefix: token.prefix,
    created_at: token.createdAt.toISOString(),
    last_used_at: toRfc3339(token.lastUsedAt),
    revoked_at: toRfc3339(token.revokedAt),
  };
}
