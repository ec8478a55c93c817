import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { TEAM_ROLES, TeamRole } from '../../common/auth/roles';
import { AUDIT_ACTOR_TYPES, AuditActorType } from '../audit';

@ApiSchema({ name: 'CurrentCaller', description: 'Who the request is authenticated as' })
export class MeDto {
  @ApiProperty({ enum: AUDIT_ACTOR_TYPES, description: 'user: a console session; else the key' })
  type: AuditActorType;
  @ApiProperty({ description: 'The user (or agent) the caller acts as' }) user_id: string;
  @ApiProperty() display_name: string;
  @ApiProperty({ nullable: true, type: String }) email: string | null;
  @ApiProperty() team_id: string;
  @ApiProperty() team_name: string;
  @ApiProperty({ enum: TEAM_ROLES }) role: TeamRole;
  @ApiProperty({ description: 'The auth strategy that recognised the caller (api_key, session…)' })
  signed_in_with: string;
  @ApiPropertyOptional({
    description: 'Session only: send it as x-csrf-token on every POST, PUT, PATCH and DELETE',
  })
  csrf_token?: string;
  @ApiPropertyOptional({ format: 'date-time', description: 'Session only: when it ends' })
  session_expires_at?: string;
}
