import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SecretsModule } from '../secrets';
import { TeamsModule } from '../teams';
import { Environment, EnvironmentGrant } from './environment.entity';
import { EnvironmentsService } from './environments.service';
import { EnvironmentSharingService } from './environment-sharing.service';

/** Environments: their configuration, grants and share links (what runs execute in). */
@Module({
  imports: [TypeOrmModule.forFeature([Environment, EnvironmentGrant]), TeamsModule, SecretsModule],
  providers: [EnvironmentsService, EnvironmentSharingService],
  exports: [EnvironmentsService, EnvironmentSharingService],
})
export class EnvironmentsModule {}
