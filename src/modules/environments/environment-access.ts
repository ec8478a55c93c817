import { EntityManager, In } from 'typeorm';
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
  return (await environmentsSeenBy(manager, teamId, [environmentId])).get(environmentId) ?? null;
}

/** Of `environmentIds`, those `teamId` sees (as environmentSeenBy), by id: two queries at most. */
export async function environmentsSeenBy(
  manager: EntityManager,
  teamId: string,
  environmentIds: string[],
): Promise<Map<string, VisibleEnvironment>> {
  const seen = new Map<string, VisibleEnvironment>();
  if (environmentIds.length === 0) return seen;
  const rows = await manager.getRepository(Environment).findBy({ id: In(environmentIds) });
  const foreign = rows.filter((e) => e.teamId !== teamId).map((e) => e.id);
  const grants = foreign.length
    ? await manager.getRepository(EnvironmentGrant).findBy({ teamId, environmentId: In(foreign) })
    : [];
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
