import { createHash } from 'node:crypto';
import type { DataSource, QueryRunner } from 'typeorm';

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

/** What `whileNamedLockHeld` did: ran the work holding the lock, or could not get the lock. */
export type NamedLockOutcome<T> = { locked: true; value: T } | { locked: false };

/**
 * Runs `work` holding `purpose`'s named lock of the data source's database, on a connection of its
 * own; waits up to `waitSeconds` for the lock (0: not at all) and, when it could not get it,
 * answers `{ locked: false }` without running `work`. The lock belongs to that connection: a
 * process that dies holding it frees it with the connection.
 */
export async function whileNamedLockHeld<T>(
  dataSource: DataSource,
  purpose: string,
  waitSeconds: number,
  work: () => Promise<T>,
): Promise<NamedLockOutcome<T>> {
  const lock = databaseLockName(purpose, String(dataSource.options.database));
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  let held = false;
  try {
    const [{ locked }] = (await runner.query(`SELECT GET_LOCK(?, ?) AS locked`, [
      lock,
      waitSeconds,
    ])) as { locked: number | string | null }[];
    if (Number(locked) !== 1) return { locked: false };
    held = true;
    const value = await work();
    return { locked: true, value };
  } finally {
    if (held) {
      const released = await runner.query(`SELECT RELEASE_LOCK(?)`, [lock]).then(
        () => true,
        () => false,
      );
      // A connection back in the pool still holding the lock would keep it from every other
      // process for good: one the release failed on is closed instead (the server frees it).
      if (!released) destroyConnection(runner);
    }
    await runner.release();
  }
}

function destroyConnection(runner: QueryRunner): void {
  const connection = (runner as { databaseConnection?: { destroy?: () => void } })
    .databaseConnection;
  connection?.destroy?.();
}
