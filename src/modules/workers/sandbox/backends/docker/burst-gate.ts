/** What counts as a burst of sandboxes. */
export interface BurstTiming {
  /** At least this many sandboxes… */
  size: number;
  /** …opened within this long and still open. */
  windowMs: number;
  /** While a burst lasts, background work looks again this often. */
  pollMs: number;
}

const BURST_TIMING: BurstTiming = { size: 5, windowMs: 10_000, pollMs: 250 };

/**
 * Tells the docker backend's background work — refilling the warm pool, removing the containers
 * of closed sandboxes — whether a burst of sandboxes is in progress: many opened recently and
 * still open (runs starting together, running, ending together). Those need the daemon and the
 * CPU now (a container made costs the daemons ≈ 200 ms of CPU, one stopped and removed ≈ 60 ms);
 * the next burst's containers and the last one's removal can wait until it is over. Sandboxes
 * opened one after another (each closed before the next few open) are no burst: the pool keeps
 * up with them at full speed.
 */
export class BurstGate {
  private readonly openedAt = new Map<number, number>();
  private nextId = 0;

  constructor(
    private readonly timing: BurstTiming = BURST_TIMING,
    private readonly now: () => number = Date.now,
  ) {}

  /** A sandbox was opened; the function returned says it closed (once is enough). */
  opened(): () => void {
    const id = this.nextId++;
    this.openedAt.set(id, this.now());
    return () => void this.openedAt.delete(id);
  }

  /** How long background work should wait before it looks again; 0: no burst, it may go. */
  waitMs(): number {
    const since = this.now() - this.timing.windowMs;
    let recent = 0;
    for (const at of this.openedAt.values()) if (at > since) recent++;
    return recent >= this.timing.size ? this.timing.pollMs : 0;
  }
}
