import { Controller, Get, Req } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { CurrentPrincipal } from '../../common/auth/principal.decorator';
import type { Principal } from '../../common/auth/principal';
import { RequirePermission } from '../../common/auth/require-permission.decorator';
import { ApiProblems } from '../../common/errors/problem.schema';
import { toRfc3339 } from '../../common/time';
import { actorOf, type AuditActorType } from '../audit';
import {
  cookiesOf,
  SESSION_COOKIE,
  SESSION_STRATEGY,
  UserSessionsService,
  TeamUserRepository,
} from '../teams';
import { MeDto } from './me.dto';

/**
 * What the caller is, as the console tells a person from an agent: an agent identity's key is
 * `agent` (the audit log names the key itself, on the agent's behalf), else as the audit actor.
 */
export function callerType(principal: Principal): AuditActorType {
  if (!principal.runId && principal.userType === 'service_account') return 'agent';
  return actorOf(principal).type;
}

/** `GET /me`: the console shows who is signed in, and reads its session's CSRF token here. */
@ApiTags('auth')
@ApiBearerAuth()
@Controller('me')
export class MeController {
  constructor(
    private readonly teamsAndUsers: TeamUserRepository,
    private readonly sessions: UserSessionsService,
  ) {}

  @Get()
  @RequirePermission('profile.read')
  @ApiOperation({ operationId: 'getCurrentCaller', summary: 'Who the request is authenticated as' })
  @ApiOkResponse({ type: MeDto })
  @ApiProblems(401)
  async me(@CurrentPrincipal() principal: Principal, @Req() request: Request): Promise<MeDto> {
    const team = await this.teamsAndUsers.team(principal.teamId);
    const me: MeDto = {
      type: callerType(principal),
      user_id: principal.userId,
      display_name: principal.displayName,
      email: principal.email,
      team_id: team.id,
      team_name: team.name,
      role: principal.role,
      signed_in_with: principal.strategy ?? 'api_key',
    };
    if (principal.strategy === SESSION_STRATEGY) {
      const token = cookiesOf(request.headers).get(SESSION_COOKIE);
      const session = token ? await this.sessions.principalOf(token) : null;
      if (session) {
        me.csrf_token = session.csrfToken;
        me.session_expires_at = toRfc3339(session.expiresAt) ?? undefined;
      }
    }
    return me;
  }
}
