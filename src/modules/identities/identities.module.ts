import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ModelsModule } from '../models';
import { SecretsModule } from '../secrets';
import { TeamsModule } from '../teams';
import { AgentAvailability } from './agent-availability.service';
import { AgentIdentity } from './agent-identity.entity';
import { AgentIdentityRepository } from './agent-identity.repository';
import { IdentitiesController } from './identities.controller';
import { IdentitiesService } from './identities.service';
import { IdentityKeysController } from './identity-keys.controller';
import { IdentityRunResolver } from './identity-run-resolver.service';
import { IdentitySecretScope } from './identity-secret-scope';
import { IdentityApprovals } from './identity-approvals.service';

/**
 * Agent identities (`/agent/identities`) and their API keys. RunsModule imports this module to
 * resolve `agent_identity_uid`; this module never imports RunsModule.
 */
@Module({
  imports: [TypeOrmModule.forFeature([AgentIdentity]), TeamsModule, ModelsModule, SecretsModule],
  controllers: [IdentitiesController, IdentityKeysController],
  providers: [
    IdentitiesService,
    AgentAvailability,
    IdentityRunResolver,
    AgentIdentityRepository,
    IdentitySecretScope,
    IdentityApprovals,
  ],
  exports: [
    IdentitiesService,
    AgentAvailability,
    IdentityRunResolver,
    AgentIdentityRepository,
    IdentityApprovals,
  ],
})
export class IdentitiesModule {}
