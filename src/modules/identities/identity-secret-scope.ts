import { Injectable, OnModuleInit } from '@nestjs/common';
import { TeamSecretsService } from '../secrets';
import { AgentIdentityRepository } from './agent-identity.repository';

/** Tells secrets (a module below identities) which agent identities a secret's scope may name. */
@Injectable()
export class IdentitySecretScope implements OnModuleInit {
  constructor(
    private readonly secrets: TeamSecretsService,
    private readonly identities: AgentIdentityRepository,
  ) {}

  onModuleInit(): void {
    this.secrets.addScopeOwner('agent_identities', (manager, teamId, ids) =>
      this.identities.userIdsOfTeam(manager, teamId, ids),
    );
  }
}
