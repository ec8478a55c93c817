/**
 * Polls `probe` until `accept` holds: how a test waits for something another process does
 * (a run reaching a state). Fails with the last value seen, never a fixed sleep.
 */
export async function waitFor<T>(
  probe: () => Promise<T>,
  accept: (value: T) => boolean,
  { timeoutMs = 20_000, intervalMs = 50, what = 'condition' } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  for (;;) {
    last = await probe();
    if (accept(last)) return last;
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}; last value: ${JSON.stringify(last)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/**
 * Awaits `promise`, failing with `what` once `timeoutMs` passed: a test's wait on an event that
 * may never come fails on its own, well before jest's timeout would leave its cleanup undone.
 */
export async function settledWithin<T>(
  promise: Promise<T>,
  what: string,
  timeoutMs = 20_000,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}
