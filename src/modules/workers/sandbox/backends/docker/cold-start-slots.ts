import { availableParallelism } from 'node:os';

/**
 * How many containers are created and started at once for sandboxes the warm pool could not
 * serve. Twenty started together all became ready at the end of the burst; in order, the first
 * are ready in half that time and the median a quarter earlier, the last somewhat later. Two per
 * core measured best of 2, 4, 6 and unbounded on two cores (docs/PERFORMANCE.md): the daemons
 * overlap some of a container's set-up with another's.
 */
export const COLD_STARTS = Math.max(2, 2 * availableParallelism());

/**
 * A FIFO semaphore for cold container starts: at most `limit` hold a slot, the others wait in the
 * order they asked, so each hand-out waits behind the ones before it, not behind all of them.
 */
export class ColdStartSlots {
  private held = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit = COLD_STARTS) {}

  /**
   * Resolves with the slot's release (calling it again does nothing) once one is free. Rejects
   * with the signal's reason once it aborts before then (a sandbox closed while it waits): the
   * waiter leaves the queue at once, without a slot, and the others keep their order.
   */
  async acquire(signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    if (this.held < this.limit && this.waiting.length === 0) this.held++;
    else await this.wait(signal);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      // The slot passes straight to the next in line: `held` stays as it is.
      if (next) next();
      else this.held--;
    };
  }

  /** Waits in line until a released slot is handed over, or leaves the line when `signal` aborts. */
  private wait(signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const leave = (): void => {
        const at = this.waiting.indexOf(handOver);
        if (at >= 0) this.waiting.splice(at, 1);
        reject(signal?.reason);
      };
      // Handed a slot: an abort from now on is the holder's to see (it holds the slot).
      const handOver = (): void => {
        signal?.removeEventListener('abort', leave);
        resolve();
      };
      this.waiting.push(handOver);
      signal?.addEventListener('abort', leave, { once: true });
    });
  }

  /** How many wait for a slot. */
  get queued(): number {
    return this.waiting.length;
  }
}
