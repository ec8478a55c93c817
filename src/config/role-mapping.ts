import { isTeamRole, TEAM_ROLES, type TeamRole } from '../common/auth/roles';

/** One entry of AMBIENT_OIDC_ROLE_MAPPING: users whose claim holds `value` get `role` in `team`. */
export interface RoleMappingEntry {
  value: string;
  team: string;
  role: TeamRole;
}

/** Strongest first, as TEAM_ROLES lists them. */
const STRENGTH = (role: TeamRole) => TEAM_ROLES.indexOf(role);

/**
 * Reads `value=team:role,value=team:role,...`: the claim value is everything before the entry's
 * last `=`, the team everything between it and the last `:`, the role one of admin, member,
 * viewer. Blank entries are skipped; anything else unreadable is an error naming the entry.
 */
export function parseRoleMapping(text: string): RoleMappingEntry[] {
  const entries = text
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      const eq = entry.lastIndexOf('=');
      const colon = entry.lastIndexOf(':');
      const value = entry.slice(0, eq).trim();
      const team = entry.slice(eq + 1, colon).trim();
      const role = entry.slice(colon + 1).trim();
      if (eq <= 0 || colon < eq || !value || !team) {
        throw new Error(`entry "${entry}" is not <claim value>=<team>:<role>`);
      }
      if (!isTeamRole(role)) {
        throw new Error(`entry "${entry}": role must be one of ${TEAM_ROLES.join(', ')}`);
      }
      return { value, team, role };
    });
  if (entries.length === 0) throw new Error('names no claim value');
  return entries;
}

/**
 * The team and role a user's claim maps to, or null when no entry matches. The claim may be a
 * string or a list of strings (`groups`). Several matches: the team of the first matching entry
 * (mapping order), with the strongest role any matching entry gives in that team.
 */
export function mapClaim(
  entries: readonly RoleMappingEntry[],
  claim: unknown,
): { team: string; role: TeamRole } | null {
  const held = new Set(
    (Array.isArray(claim) ? claim : [claim]).filter((v): v is string => typeof v === 'string'),
  );
  const matches = entries.filter((entry) => held.has(entry.value));
  if (matches.length === 0) return null;
  const team = matches[0].team;
  const role = matches
    .filter((entry) => entry.team === team)
    .map((entry) => entry.role)
    .reduce((best, role) => (STRENGTH(role) < STRENGTH(best) ? role : best));
  return { team, role };
}

/** The teams a mapping names, once each, in mapping order. */
export function mappedTeams(entries: readonly RoleMappingEntry[]): string[] {
  return [...new Set(entries.map((entry) => entry.team))];
}
