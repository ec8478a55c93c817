import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SecretsModule } from '../secrets';
import { TeamsModule } from '../teams';
import { Environment, EnvironmentGrant } from './environment.entity';
import { EnvironmentSecretScope } from './environment-secret-scope';
import { EnvironmentsService } from './environments.service';
import { NetworkPolicyService } from './network-policy/network-policy.service';
import { TeamNetworkPolicy } from './network-policy/team-network-policy.entity';
import { TeamNetworkPolicyRepository } from './network-policy/team-network-policy.repository';
import { EnvironmentSharingService } from './environment-sharing.service';
import { EnvironmentRepository } from './environment.repository';
import { EnvironmentAccess } from './environment-access';
import { EnvironmentGrantRepository } from './environment-grant.repository';

/** Environments: their configuration, grants and share links (what runs execute in), and the team's network policy. */
@Module({
  imports: [
    TypeOrmModule.forFeature([Environment, EnvironmentGrant, TeamNetworkPolicy]),
    TeamsModule,
    SecretsModule,
  ],
  providers: [
    EnvironmentsService,
    NetworkPolicyService,
    TeamNetworkPolicyRepository,
    EnvironmentSharingService,
    EnvironmentRepository,
    EnvironmentGrantRepository,
    EnvironmentAccess,
    EnvironmentSecretScope,
  ],
  exports: [
    EnvironmentsService,
    NetworkPolicyService,
    EnvironmentSharingService,
    EnvironmentRepository,
    EnvironmentAccess,
  ],
})
export class EnvironmentsModule {}
