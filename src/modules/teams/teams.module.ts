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
import { Team } from './team.entity';
import { TeamsService } from './teams.service';
import { User } from './user.entity';

@Module({
  imports: [TypeOrmModule.forFeature([Team, User, ApiKey])],
  providers: [
    TeamsService,
    ApiKeysService,
    UserDirectoryService,
    BootstrapService,
    KeyRevocationWatch,
    AccessDenials,
    {
      provide: AuthStrategyRegistry,
      inject: [AMBIENT_EXTENSIONS, APP_CONFIG, ApiKeysService, UserDirectoryService],
      useFactory: (
        extensions: AmbientExtension[],
        config: AppConfig,
        apiKeys: ApiKeysService,
        users: UserDirectoryService,
      ) => authStrategyRegistryOf(extensions, { config, apiKeys, users }),
    },
  ],
  exports: [
    TeamsService,
    ApiKeysService,
    BootstrapService,
    KeyRevocationWatch,
    AccessDenials,
    AuthStrategyRegistry,
  ],
})
export class TeamsModule {}
