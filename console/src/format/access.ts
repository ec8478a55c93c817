import { refusalOf, rolesWith, type Permission } from '../../../src/common/auth/roles';
import type { components } from '../api/schema';

type Caller = Pick<components['schemas']['CurrentCaller'], 'role' | 'type'>;

/**
 * Why the signed-in caller may not `what` (e.g. "start runs"), in words, or null when they may
 * (or while that is not known yet: the server refuses anyway). The same rules as the server's
 * permission guard (src/common/auth/roles.ts).
 */
export function refusalText(
  caller: Caller | undefined,
  permission: Permission,
  what: string,
): string | null {
  if (!caller) return null;
  const userType = caller.type === 'agent' ? 'service_account' : 'user';
  if (!refusalOf({ role: caller.role, userType }, permission)) return null;
  if (userType === 'service_account') {
    return `You are signed in with an agent identity's key, which may not ${what}: only people may.`;
  }
  const roles = rolesWith(permission);
  const needed =
    roles.length > 1
      ? `the ${roles.slice(0, -1).join(', ')} or ${roles.at(-1)} role`
      : `the ${roles[0]} role`;
  return `You are signed in as a ${caller.role}, and a ${caller.role} may not ${what}. That takes ${needed}: ask a team admin for a key with it.`;
}
