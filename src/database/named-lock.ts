import { createHash } from 'node:crypto';

/**
 * The name of a MySQL named lock that guards `purpose` in one database. Named locks are
 * server-wide: deployments (or test databases) sharing a server each get their own, so they never
 * wait for each other's migrations or bootstrap. Lock names are at most 64 characters; a long
 * database name is hashed.
 */
export function databaseLockName(purpose: string, database: string): string {
  const name = `ambient_${purpose}:${database}`;
  if (name.length <= 64) return name;
  const hash = createHash('sha256').update(database).digest('hex');
  return `ambient_${purpose}:${hash}`.slice(0, 64);
}
