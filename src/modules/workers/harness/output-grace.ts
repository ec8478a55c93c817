/**
 * Waits for a process's output streams to end, `graceMs` at most after it exited (a background
 * child may hold them open). The wait ends in the event loop's check phase, after one more poll
 * for I/O: a loop blocked past the grace still reads the output that had arrived meanwhile,
 * rather than destroying the streams in the timers phase before the pipes were read.
 */
export async function outputEnded(ended: Promise<unknown>, graceMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const grace = new Promise<void>((resolve) => {
    timer = setTimeout(() => setImmediate(resolve), graceMs);
  });
  try {
    await Promise.race([ended, grace]);
  } finally {
    clearTimeout(timer);
  }
}
