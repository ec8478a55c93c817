/** What other modules may use of teams/: they import it from here only (ESLint rule ambient/import-through-index). */
export type { ApiKey } from './api-key.entity';
export { API_KEY_TOPIC, ApiKeysService, USER_TOPIC } from './api-keys.service';
export { API_KEY_STRATEGY } from './auth/api-key.strategy';
export { AuthStrategyRegistry } from './auth/auth-strategy-registry';
export { KEY_RECHECK_INTERVAL_MS, KeyRevocationWatch } from './key-revocation-watch.service';
export { PersonAccess } from './person-access.service';
export type { CutAccess } from './person-access.service';
export { optionalCallerTeam } from './optional-caller';
export { RunScoped } from './run-scoped.decorator';
export {
  CSRF_COOKIE,
  CSRF_HEADER,
  SESSION_COOKIE,
  changesState,
  cookieOptions,
  cookiesOf,
} from './sessions/session-cookies';
export { SESSION_STRATEGY } from './sessions/session.strategy';
export { UserSessionsService, sameToken } from './sessions/user-sessions.service';
export type { StartedSession } from './sessions/user-sessions.service';
export { Team } from './team.entity';
export { TeamsModule } from './teams.module';
export { TeamsService } from './teams.service';
export { TeamUserRepository } from './team-user.repository';
export { ScopeDto, UserProfileDto, profile } from './user-profile';
export { User } from './user.entity';
