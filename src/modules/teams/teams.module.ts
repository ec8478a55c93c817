import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { AMBIENT_EXTENSIONS, AmbientExtension } from '../../extensions/extension.types';
import { AccessDenials } from './access/access-denials.service';
import { ApiKey } from './api-key.entity';
import { ApiKeysService } from './api-keys.service';
import { AuthStrategyRegistry, authStrategyRegistryOf } from './auth/auth-strategy-registry';
import { UserDirectoryService } from './auth/user-directory.service';
import { BootstrapService } from './bootstrap.service';
import { KeyRevocationWatch } from './key-revocation-watch.service';
import { PersonAccess } from './person-access.service';
import { ScimToken } from './scim/scim-token.entity';
import { ScimTokensService } from './scim/scim-tokens.service';
import { ScimUsersService } from './scim/scim-users.service';
import { Team } from './team.entity';
import { TeamsService } from './teams.service';
import { User } from './user.entity';
import { UserSession } from './sessions/user-session.entity';
import { UserSessionsService } from './sessions/user-sessions.service';

@Module({
  imports: [TypeOrmModule.forFeature([Team, User, ApiKey, UserSession, ScimToken])],
  providers: [
    TeamsService,
    ApiKeysService,
    UserDirectoryService,
    UserSessionsService,
    BootstrapService,
    KeyRevocationWatch,
    PersonAccess,
    ScimTokensService,
    ScimUsersService,
    AccessDenials,
    {
      provide: AuthStrategyRegistry,
      inject: [
        AMBIENT_EXTENSIONS,
        APP_CONFIG,
        ApiKeysService,
        UserDirectoryService,
        UserSessionsService,
      ],
      useFactory: (
        extensions: AmbientExtension[],
        config: AppConfig,
        apiKeys: ApiKeysService,
        users: UserDirectoryService,
        sessions: UserSessionsService,
      ) => authStrategyRegistryOf(extensions, { config, apiKeys, users, sessions }),
    },
  ],
  exports: [
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
