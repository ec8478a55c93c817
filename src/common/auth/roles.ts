/** A team role, held by an API key (or, for keys without one, by the key's user). */
export const TEAM_ROLES = ['admin', 'member', 'viewer'] as const;
export type TeamRole = (typeof TEAM_ROLES)[number];

/**
 * Everything a route may require, `<resource>.<verb>`. `runs.report` belongs to no role: only a
 * run-scoped key holds it, for its own run (see RunScoped).
 */
export const PERMISSIONS = [
  'runs.read',
  'runs.create',
  'runs.cancel',
  'runs.followup',
  'runs.report',
  'approvals.decide',
  'schedules.read',
  'schedules.write',
  'environments.read',
  'environments.write',
  'environments.accept',
  'agents.read',
  'agents.write',
  'models.read',
  'skills.read',
  'workers.read',
  'worker_credentials.read',
  'worker_credentials.write',
  'secrets.read',
  'secrets.write',
  'factories.read',
  'factories.write',
  'webhooks.read',
  'webhooks.write',
  'api_keys.read',
  'api_keys.write',
  'audit.read',
  'profile.read',
  'usage.read',
  'limits.read',
  'limits.write',
  'network.read',
  'network.write',
  'notifications.read',
  'notifications.write',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

/** Reads only admins make: the team's keys, worker credentials, audit log and notification endpoints. */
const ADMIN_READS: ReadonlySet<Permission> = new Set<Permission>([
  'api_keys.read',
  'worker_credentials.read',
  'audit.read',
  'notifications.read',
]);
const READ: Permission[] = PERMISSIONS.filter((p) => p.endsWith('.read') && !ADMIN_READS.has(p));

/** What each role may do: a viewer reads, a member also works with runs, an admin does everything. */
const ROLE_PERMISSIONS: Record<TeamRole, ReadonlySet<Permission>> = {
  viewer: new Set(READ),
  member: new Set<Permission>([
    ...READ,
    'runs.create',
    'runs.cancel',
    'runs.followup',
    'approvals.decide',
    'schedules.write',
    'environments.write',
  ]),
  admin: new Set(PERMISSIONS.filter((p) => p !== 'runs.report')),
};

export function roleAllows(role: TeamRole, permission: Permission): boolean {
  return ROLE_PERMISSIONS[role].has(permission);
}

/**
 * What an agent identity's keys may never do, whatever their role: people manage agents, and
 * people decide what agents asked them (an agent never approves a run's request).
 */
const PEOPLE_ONLY: ReadonlySet<Permission> = new Set<Permission>([
  'agents.read',
  'agents.write',
  'approvals.decide',
]);

/**
 * Why a caller may not use `permission`, or null when it may: its role must hold it, and an
 * agent identity's key (a service account) is refused what only people may do.
 */
export function refusalOf(
  caller: { role: TeamRole; userType: 'user' | 'service_account' },
  permission: Permission,
): string | null {
  if (caller.userType === 'service_account' && PEOPLE_ONLY.has(permission)) {
    const only = permission === 'approvals.decide' ? 'decide approval requests' : 'manage agents';
    return `an agent identity's key lacks permission "${permission}": only human users can ${only}`;
  }
  if (roleAllows(caller.role, permission)) return null;
  return `role "${caller.role}" lacks permission "${permission}" (held by: ${rolesWith(permission).join(', ')})`;
}

/** The roles holding `permission`, strongest first (the OpenAPI `x-ambient-roles` of a route). */
export function rolesWith(permission: Permission): TeamRole[] {
  return TEAM_ROLES.filter((role) => roleAllows(role, permission));
}

/** The weaker of two roles: a key acts with the lower of its own role and its person's. */
export function lowerRole(a: TeamRole, b: TeamRole): TeamRole {
  return TEAM_ROLES.indexOf(a) > TEAM_ROLES.indexOf(b) ? a : b;
}

export function isTeamRole(value: unknown): value is TeamRole {
  return typeof value === 'string' && (TEAM_ROLES as readonly string[]).includes(value);
}
