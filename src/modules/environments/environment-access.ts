import type { EntityManager } from 'typeorm';
import { Environment, EnvironmentGrant } from './environment.entity';

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

/**
 * The environment as `teamId` sees it: its own, or the accepted version of one granted to it;
 * null when it does not exist for that team (unknown, not granted, or not accepted yet).
 */
export async function environmentSeenBy(
  manager: EntityManager,
  teamId: string,
  environmentId: string,
): Promise<VisibleEnvironment | null> {
  const environment = await manager.getRepository(Environment).findOneBy({ id: environmentId });
  if (!environment) return null;
  if (environment.teamId === teamId) return { environment, scope: 'owner' };
  const grant = await manager.getRepository(EnvironmentGrant).findOneBy({ environmentId, teamId });
  return isAccepted(grant) ? { environment: asAccepted(environment, grant), scope: 'guest' } : null;
}

/**
 * Records a run's setup outcome where its team sees it: the owning team's on the environment, a
 * guest team's on its grant (so the owner learns nothing of guests' runs). Success only clears.
 */
export async function recordSetupOutcome(
  manager: EntityManager,
  teamId: string,
  environmentId: string,
  failed: boolean,
): Promise<void> {
  const match = failed ? {} : { setupFailed: true };
  await manager
    .getRepository(Environment)
    .update({ id: environmentId, teamId, ...match }, { setupFailed: failed });
  await manager
    .getRepository(EnvironmentGrant)
    .update({ environmentId, teamId, ...match }, { setupFailed: failed });
}
