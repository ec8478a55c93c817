/** What other modules may use of teams/: they import it from here only (ESLint rule ambient/import-through-index). */
export type { ApiKey } from './api-key.entity';
export { ApiKeysService } from './api-keys.service';
export { API_KEY_STRATEGY } from './auth/api-key.strategy';
export { AuthStrategyRegistry } from './auth/auth-strategy-registry';
export { KeyRevocationWatch } from './key-revocation-watch.service';
export { optionalCallerTeam } from './optional-caller';
export { RunScoped } from './run-scoped.decorator';
export { Team } from './team.entity';
export { TeamsModule } from './teams.module';
export { TeamsService } from './teams.service';
export { ScopeDto, UserProfileDto, profile } from './user-profile';
export type { User } from './user.entity';
