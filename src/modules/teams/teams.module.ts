import { Module } from '@nestjs/common';
import { PassportModule } from '@nestjs/passport';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ApiKey } from './api-key.entity';
import { ApiKeysService } from './api-keys.service';
import { BearerStrategy } from './bearer.strategy';
import { BootstrapService } from './bootstrap.service';
import { KeyRevocationWatch } from './key-revocation-watch.service';
import { Team } from './team.entity';
import { TeamsService } from './teams.service';
import { User } from './user.entity';

@Module({
  imports: [TypeOrmModule.forFeature([Team, User, ApiKey]), PassportModule],
  providers: [TeamsService, ApiKeysService, BearerStrategy, BootstrapService, KeyRevocationWatch],
  exports: [TeamsService, ApiKeysService, BootstrapService, KeyRevocationWatch],
})
export class TeamsModule {}
