/** How long an enqueue may wait for Redis before the caller leaves the job to its sweeper. */
export const ENQUEUE_TIMEOUT_MS = 1000;

export type EnqueueOutcome =
  { state: 'done' } | { state: 'timeout' } | { state: 'failed'; error: Error };

/**
 * Waits at most `timeoutMs` for an enqueue (a `queue.add`/`addBulk`): a slow or unreachable
 * Redis never holds the request that committed the work; every Ambient queue has a sweeper that
 * enqueues again what was lost. The add keeps running after a timeout, its failure ignored.
 */
export async function enqueueWithin(
  add: Promise<unknown>,
  timeoutMs = ENQUEUE_TIMEOUT_MS,
): Promise<EnqueueOutcome> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<EnqueueOutcome>((resolve) => {
    timer = setTimeout(() => resolve({ state: 'timeout' }), timeoutMs);
  });
  try {
    return await Promise.race([add.then((): EnqueueOutcome => ({ state: 'done' })), timeout]);
  } catch (err) {
    return { state: 'failed', error: err instanceof Error ? err : new Error(String(err)) };
  } finally {
    clearTimeout(timer);
    add.catch(() => undefined);
  }
}
