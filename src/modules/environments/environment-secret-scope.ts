import { Injectable, OnModuleInit } from '@nestjs/common';
import { TeamSecretsService } from '../secrets';
import { EnvironmentRepository } from './environment.repository';

/**
 * Tells secrets (a module below environments) which environments a secret's scope may name, and
 * keeps a secret an environment names from being deleted from under it (409, like webhooks').
 */
@Injectable()
export class EnvironmentSecretScope implements OnModuleInit {
  constructor(
    private readonly secrets: TeamSecretsService,
    private readonly environments: EnvironmentRepository,
  ) {}

  onModuleInit(): void {
    this.secrets.addScopeOwner('environments', (manager, teamId, ids) =>
      this.environments.idsOfTeam(manager, teamId, ids),
    );
    this.secrets.addUsageCheck(async (teamId, name, manager) => {
      const users = await this.environments.namesUsingSecret(teamId, name, manager);
      return users.length
        ? `used by environment(s) ${users.join(', ')}; remove it from their secrets first`
        : null;
    });
  }
}
