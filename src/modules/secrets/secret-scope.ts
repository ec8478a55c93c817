/** `webhook`: a webhook's signing secret, which no run may have. */
export type SecretPurpose = 'webhook';

/**
 * The runs a team secret is limited to: a run may have it when it runs in one of `environments`,
 * as one of `agent_identities` (uids), or for one of `schedules`. Empty lists: no run may.
 */
export interface SecretScope {
  environments: string[];
  agent_identities: string[];
  schedules: string[];
}

/** What of a run decides which scoped secrets it may have. */
export interface SecretRunContext {
  environmentId: string | null;
  /** The agent identity the run executes as (its uid), or the person who created it. */
  executorId: string | null;
  scheduleId: string | null;
}

/** Why a run may not have a secret, or null when it may. */
export function secretRefusal(
  secret: { name: string; scope: SecretScope | null; purpose: SecretPurpose | null },
  run: SecretRunContext,
): string | null {
  if (secret.purpose === 'webhook') {
    return `secret "${secret.name}" is a webhook's signing secret; runs never get it`;
  }
  const { scope } = secret;
  if (!scope) return null;
  const within = (ids: string[], id: string | null) => id !== null && ids.includes(id);
  if (
    within(scope.environments, run.environmentId) ||
    within(scope.agent_identities, run.executorId) ||
    within(scope.schedules, run.scheduleId)
  ) {
    return null;
  }
  return `secret "${secret.name}" is limited to ${describeScope(scope)}, and this run is none of them`;
}

export function describeScope(scope: SecretScope): string {
  const parts = [
    scope.environments.length && `environments ${scope.environments.join(', ')}`,
    scope.agent_identities.length && `agent identities ${scope.agent_identities.join(', ')}`,
    scope.schedules.length && `schedules ${scope.schedules.join(', ')}`,
  ].filter((part): part is string => Boolean(part));
  return parts.length ? parts.join('; ') : 'no run';
}
