import { settlesWithin } from '../../../../../common/time';
import { BurstGate } from './burst-gate';

/** At most this many removals are sent to the daemon at once. */
const PARALLEL_REMOVALS = 2;
/** A removal waits for a burst to end this long at most (bursts of long runs, one after another). */
const MAX_WAIT_MS = 10_000;
/**
 * A removal the daemon has not answered in this time no longer holds its place (it may still
 * finish; what it leaves is the sweep's): one hung request must not stop every later removal.
 */
const REMOVAL_TIMEOUT_MS = 120_000;

/**
 * Removals done in the background, a few at a time and after the burst of sandboxes in progress
 * (see BurstGate), if any: a sandbox's close does not wait for its container's `docker rm` (its
 * processes are killed already), and a burst of runs ending does not send the daemon a burst of
 * removals that the runs still going would queue behind. A removal a crash leaves undone is the
 * orphan sweep's (the container keeps its labels until it is gone).
 */
export class RemovalQueue {
  private readonly queued: { remove: () => Promise<void>; now: boolean; at: number }[] = [];
  private running = 0;
  private idle: (() => void)[] = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly gate = new BurstGate(),
    private readonly parallel = PARALLEL_REMOVALS,
    private readonly clock: () => number = Date.now,
    private readonly timeoutMs = REMOVAL_TIMEOUT_MS,
  ) {}

  /**
   * Queues a removal; its failure is its own (the sweep removes what is left). One added `now`
   * goes before the others and does not wait for the gate (something else waits for it).
   */
  add(remove: () => Promise<void>, now = false): void {
    const entry = { remove, now, at: this.clock() };
    if (now) this.queued.unshift(entry);
    else this.queued.push(entry);
    this.next();
  }

  /** Removals queued or under way. */
  get pending(): number {
    return this.queued.length + this.running;
  }

  /**
   * Does what is queued without waiting for the gate (at shutdown), and resolves once nothing
   * is queued or under way.
   */
  flush(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    const done = new Promise<void>((resolve) => this.idle.push(resolve));
    this.next();
    return done;
  }

  private next(): void {
    const flushing = this.idle.length > 0;
    while (this.running < this.parallel && this.queued.length > 0) {
      // Those added `now` are at the front: past them, everything waits for the gate.
      const head = this.queued[0];
      const waited = this.clock() - head.at;
      const waitMs =
        head.now || flushing || waited >= MAX_WAIT_MS
          ? 0
          : Math.min(this.gate.waitMs(), MAX_WAIT_MS - waited);
      if (waitMs > 0) {
        this.timer ??= setTimeout(() => {
          this.timer = null;
          this.next();
        }, waitMs);
        this.timer.unref();
        return;
      }
      this.queued.shift();
      this.running++;
      void settlesWithin(head.remove(), this.timeoutMs).finally(() => {
        this.running--;
        this.next();
        if (this.pending === 0) for (const resolve of this.idle.splice(0)) resolve();
      });
    }
  }
}
