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
