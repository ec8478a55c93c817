/**
 * MySQL chose this statement's transaction as a deadlock's victim and rolled it back. TypeORM's
 * QueryFailedError carries the driver's `code`, as mysql2's own errors do.
 */
export function isDeadlock(err: unknown): boolean {
  return (err as { code?: string } | null)?.code === 'ER_LOCK_DEADLOCK';
}
