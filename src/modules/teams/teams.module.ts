import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { AccessDenials } from './access/access-denials.service';
import { ApiKey } from './api-key.entity';
import { ApiKeyRepository } from './api-key.repository';
import { ApiKeysService } from './api-keys.service';
import {
  AUTH_STRATEGY_CONTRIBUTIONS,
  AuthStrategyContribution,
  AuthStrategyRegistry,
} from './auth/auth-strategy-registry';
import { UserDirectoryService } from './auth/user-directory.service';
import { BootstrapLockRepository } from './bootstrap-lock.repository';
import { BootstrapService } from './bootstrap.service';
import { KeyRevocationWatch } from './key-revocation-watch.service';
import { PersonAccess } from './person-access.service';
import { ScimToken } from './scim/scim-token.entity';
import { ScimTokenRepository } from './scim/scim-token.repository';
import { ScimTokensService } from './scim/scim-tokens.service';
import { ScimUserRepository } from './scim/scim-user.repository';
import { ScimUsersService } from './scim/scim-users.service';
import { Team } from './team.entity';
import { TeamsService } from './teams.service';
import { User } from './user.entity';
import { UserSession } from './sessions/user-session.entity';
import { UserSessionRepository } from './sessions/user-session.repository';
import { UserSessionsService } from './sessions/user-sessions.service';
import { TeamUserRepository } from './team-user.repository';

@Module({
  imports: [TypeOrmModule.forFeature([Team, User, ApiKey, UserSession, ScimToken])],
  providers: [
    TeamUserRepository,
    ApiKeyRepository,
    UserSessionRepository,
    TeamsService,
    ApiKeysService,
    UserDirectoryService,
    UserSessionsService,
    BootstrapLockRepository,
    BootstrapService,
    KeyRevocationWatch,
    PersonAccess,
    ScimTokenRepository,
    ScimUserRepository,
    ScimTokensService,
    ScimUsersService,
    AccessDenials,
    {
      provide: AuthStrategyRegistry,
      inject: [
        AUTH_STRATEGY_CONTRIBUTIONS,
        APP_CONFIG,
        ApiKeysService,
        UserDirectoryService,
        UserSessionsService,
      ],
      useFactory: (
        contributions: AuthStrategyContribution[],
        config: AppConfig,
        apiKeys: ApiKeysService,
        users: UserDirectoryService,
        sessions: UserSessionsService,
      ) =>
        new AuthStrategyRegistry().registerAll(contributions, { config, apiKeys, users, sessions }),
    },
  ],
  exports: [
    TeamUserRepository,
    TeamsService,
    ApiKeysService,
    BootstrapService,
    KeyRevocationWatch,
    PersonAccess,
    ScimTokensService,
    ScimUsersService,
    AccessDenials,
    AuthStrategyRegistry,
    UserSessionsService,
  ],
})
export class TeamsModule {}
