import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import type { User } from './user.entity';

/** How the API shows a user or service account (a run's creator, an environment's editor). */
@ApiSchema({ name: 'RunCreatorInfo' })
export class UserProfileDto {
  @ApiPropertyOptional() uid?: string;
  @ApiPropertyOptional() display_name?: string;
  @ApiPropertyOptional() email?: string;
  @ApiPropertyOptional({ format: 'uri' }) photo_url?: string;
  @ApiPropertyOptional({ enum: ['user', 'service_account'] }) type?: string;
}

/** Who an object belongs to: a user or the team. */
@ApiSchema({ name: 'Scope' })
export class ScopeDto {
  @ApiProperty({ enum: ['User', 'Team'] }) type: 'User' | 'Team';
  @ApiPropertyOptional() uid?: string;
}

/** A user as the API shows it; undefined for none. */
export function profile(user: User | undefined): UserProfileDto | undefined {
  if (!user) return undefined;
  return {
    uid: user.id,
    display_name: user.displayName,
    ...(user.email ? { email: user.email } : {}),
    type: user.type,
  };
}
