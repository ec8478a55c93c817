import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Environment, EnvironmentGrant } from './environment.entity';
import { EnvironmentGrantRepository } from './environment-grant.repository';
import { EnvironmentRepository } from './environment.repository';

export interface VisibleEnvironment {
  environment: Environment;
  scope: 'owner' | 'guest';
}

/**
 * The environment as a guest team sees it: the version its admin accepted (name and config), and
 * the guest's own setup outcome. Only for a grant with an accepted version.
 */
export function asAccepted(environment: Environment, grant: EnvironmentGrant): Environment {
  const accepted = grant.acceptedConfig!;
  return {
    ...environment,
    name: accepted.name,
    config: accepted.config,
    version: grant.acceptedVersion!,
    setupFailed: grant.setupFailed,
    updatedAt: grant.acceptedAt!,
  };
}

/** Whether a grant counts: an admin of the guest team accepted a version of the environment. */
export function isAccepted(grant: EnvironmentGrant | null): grant is EnvironmentGrant {
  return Boolean(grant?.acceptedConfig && grant.acceptedVersion !== null);
}

/** Environments as a team sees them (its own, or the accepted versions of those granted to it). */
@Injectable()
export class EnvironmentAccess {
  constructor(
    private readonly environments: EnvironmentRepository,
    private readonly grants: EnvironmentGrantRepository,
  ) {}

  /**
   * The environment as `teamId` sees it: its own, or the accepted version of one granted to it;
   * null when it does not exist for that team (unknown, not granted, or not accepted yet).
   */
  async seenBy(
    teamId: string,
    environmentId: string,
    manager?: EntityManager,
  ): Promise<VisibleEnvironment | null> {
    return (await this.allSeenBy(teamId, [environmentId], manager)).get(environmentId) ?? null;
  }

  /** Of `environmentIds`, those `teamId` sees (as seenBy), by id: two queries at most. */
  async allSeenBy(
    teamId: string,
    environmentIds: string[],
    manager?: EntityManager,
  ): Promise<Map<string, VisibleEnvironment>> {
    const seen = new Map<string, VisibleEnvironment>();
    if (environmentIds.length === 0) return seen;
    const rows = await this.environments.findByIds(environmentIds, manager);
    const foreign = rows.filter((e) => e.teamId !== teamId).map((e) => e.id);
    const grants = foreign.length ? await this.grants.findOfTeam(teamId, foreign, manager) : [];
    const accepted = new Map(grants.filter(isAccepted).map((g) => [g.environmentId, g]));
    for (const environment of rows) {
      const grant = accepted.get(environment.id);
      if (environment.teamId === teamId) seen.set(environment.id, { environment, scope: 'owner' });
      else if (grant) {
        seen.set(environment.id, { environment: asAccepted(environment, grant), scope: 'guest' });
      }
    }
    return seen;
  }

  /**
   * Records a run's setup outcome where its team sees it: the owning team's on the environment, a
   * guest team's on its grant (so the owner learns nothing of guests' runs). Success only clears.
   */
  async recordSetupOutcome(
    teamId: string,
    environmentId: string,
    failed: boolean,
    manager?: EntityManager,
  ): Promise<void> {
    await this.environments.recordSetupOutcome(teamId, environmentId, failed, manager);
    await this.grants.recordSetupOutcome(teamId, environmentId, failed, manager);
  }
}
