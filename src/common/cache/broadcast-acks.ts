/** The outcome of waiting for a broadcast's acknowledgements. */
export interface AckOutcome {
  /** Receivers that acknowledged before the wait ended. */
  acknowledged: number;
  /** Receivers Redis delivered the broadcast to. */
  expected: number;
}

interface Pending {
  acknowledged: number;
  expected: number | null;
  finish?: () => void;
}

/**
 * The broadcasts of one process still waiting for their receivers' acknowledgements, by sequence
 * number. How many receivers there are comes from PUBLISH's reply, which may arrive after some of
 * the acknowledgements (they travel on another connection), so a broadcast is counted from before
 * it is published (`open`). It is done once it has as many acknowledgements as receivers, or when
 * its time is up; an acknowledgement of a broadcast no longer waited for is ignored.
 */
export class BroadcastAcks {
  private readonly pending = new Map<number, Pending>();
  private sequence = 0;

  /** A new broadcast's number: its acknowledgements are counted from now on. */
  open(): number {
    this.sequence += 1;
    this.pending.set(this.sequence, { acknowledged: 0, expected: null });
    return this.sequence;
  }

  acknowledge(seq: number): void {
    const entry = this.pending.get(seq);
    if (!entry) return;
    entry.acknowledged += 1;
    if (entry.expected !== null && entry.acknowledged >= entry.expected) entry.finish?.();
  }

  /**
   * Waits until `expected` receivers (PUBLISH's count) acknowledged `seq`, or `timeoutMs` passed;
   * at once when `seq` is no longer counted (abandoned, or ended by endAll). Never rejects.
   */
  wait(seq: number, expected: number, timeoutMs: number): Promise<AckOutcome> {
    const entry = this.pending.get(seq);
    // Abandoned or ended meanwhile: nothing is counted for it any more.
    if (!entry) return Promise.resolve({ acknowledged: 0, expected });
    return new Promise((resolve) => {
      const timer = setTimeout(() => entry.finish?.(), timeoutMs);
      timer.unref();
      entry.expected = expected;
      entry.finish = () => {
        clearTimeout(timer);
        this.pending.delete(seq);
        resolve({ acknowledged: entry.acknowledged, expected });
      };
      if (entry.acknowledged >= expected) entry.finish();
    });
  }

  /**
   * Ends every wait now with what it has (no acknowledgement can come any more: the subscription
   * they come on dropped); broadcasts not yet waited for are forgotten.
   */
  endAll(): void {
    for (const [seq, entry] of this.pending) {
      if (entry.finish) entry.finish();
      else this.pending.delete(seq);
    }
  }

  /** Stops counting `seq` (its PUBLISH failed). */
  abandon(seq: number): void {
    this.pending.delete(seq);
  }
}
