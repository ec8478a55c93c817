/** Reconnect delays of the public worker: 1 s, doubling, at most 60 s; reset after a good dial. */
export class Backoff {
  private attempt = 0;

  constructor(
    private readonly initialMs = 1000,
    private readonly maxMs = 60_000,
  ) {}

  /** The delay before the next attempt; each call doubles the following one. */
  next(): number {
    const delay = Math.min(this.maxMs, this.initialMs * 2 ** this.attempt);
    if (delay < this.maxMs) this.attempt += 1;
    return delay;
  }

  reset(): void {
    this.attempt = 0;
  }
}
