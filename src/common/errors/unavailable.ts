/**
 * Connection-level failures of MySQL or Redis (a lost, refused or timed-out connection): nothing
 * is wrong with the request or the run, the caller may retry once the backing service is back.
 */
export function isBackingServiceUnavailable(err: unknown): boolean {
  const code = (err as { code?: string })?.code ?? '';
  const message = (err as Error)?.message ?? '';
  return (
    [
      'ECONNREFUSED',
      'ECONNRESET',
      'ETIMEDOUT',
      'PROTOCOL_CONNECTION_LOST',
      'ER_CON_COUNT_ERROR',
    ].includes(code) ||
    /Connection is closed|connect ECONNREFUSED|Pool is closed|Reached the max retries|Connection lost/.test(
      message,
    )
  );
}
