/**
 * When background work may go: once nothing happened for `quietMs`, or `maxDeferMs` after the
 * first thing it waited for (a steady stream of events still lets it go now and then).
 */
export interface QuietTiming {
  quietMs: number;
  maxDeferMs: number;
}

const QUIET_TIMING: QuietTiming = { quietMs: 1_000, maxDeferMs: 10_000 };

/**
 * Holds back the docker backend's background work — refilling the warm pool, removing the
 * containers of closed sandboxes — while sandboxes are being opened or closed: a burst of runs
 * starting or ending needs the daemon and the CPU now (a container made costs the daemon ≈ 200 ms
 * of CPU, one stopped and removed ≈ 60 ms), the next burst's containers and the last one's
 * removal can wait a few seconds.
 */
export class QuietGate {
  private lastAt = 0;
  /** The first event the background work has waited for since it last went, or null. */
  private waitingSince: number | null = null;

  constructor(
    private readonly timing: QuietTiming = QUIET_TIMING,
    private readonly now: () => number = Date.now,
  ) {}

  /** A sandbox was opened or closed (or a pooled container taken). */
  touch(): void {
    const now = this.now();
    this.lastAt = now;
    this.waitingSince ??= now;
  }

  /** How long background work must still wait; 0: it may go now. */
  waitMs(): number {
    if (this.waitingSince === null) return 0;
    const now = this.now();
    const until = Math.min(
      this.lastAt + this.timing.quietMs,
      this.waitingSince + this.timing.maxDeferMs,
    );
    if (now < until) return until - now;
    this.waitingSince = null;
    return 0;
  }
}
