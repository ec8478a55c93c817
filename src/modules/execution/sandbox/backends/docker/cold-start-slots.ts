import { availableParallelism } from 'node:os';

/**
 * How many containers are created and started at once for sandboxes the warm pool could not
 * serve. The daemons' work per container is mostly CPU: twenty started together on two cores
 * took ≈ 8 s each, all ready at the end; a few at a time, the first are ready in a fraction of
 * that and the last no later.
 */
export const COLD_STARTS = Math.max(2, availableParallelism());

/**
 * A FIFO semaphore for cold container starts: at most `limit` hold a slot, the others wait in the
 * order they asked, so each hand-out waits behind the ones before it, not behind all of them.
 */
export class ColdStartSlots {
  private held = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit = COLD_STARTS) {}

  /** Resolves with the slot's release (calling it again does nothing) once one is free. */
  async acquire(): Promise<() => void> {
    if (this.held < this.limit && this.waiting.length === 0) this.held++;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
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

  /** How many wait for a slot. */
  get queued(): number {
    return this.waiting.length;
  }
}
