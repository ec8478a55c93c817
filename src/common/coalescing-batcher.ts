interface Waiting<I, O> {
  item: I;
  resolve(value: O): void;
  reject(reason: unknown): void;
}

export interface CoalescingBatcherOptions<I = unknown> {
  /** The most items one call of the batch function receives. */
  maxBatch: number;
  /** How many batch calls may run at once; further items wait and join the next batch. */
  maxInFlight: number;
  /**
   * A bound of what one batch may weigh (bytes of a statement, say), with `weightOf` giving each
   * item's share: a batch takes items while they fit, and an item heavier than the bound goes alone.
   */
  maxWeight?: number;
  weightOf?: (item: I) => number;
}

/**
 * Turns many concurrent single-item requests into few batch calls without adding a timer:
 * items submitted in one synchronous stretch (e.g. a loop) go out together at the end of it (a
 * microtask later), and an item submitted while `maxInFlight` batches are running waits for one
 * of them to end and then goes out with everything else that queued up meanwhile. Under light
 * load every item is sent on its own right away; under heavy load the batches grow by
 * themselves. An item is never added to a batch that has already been sent, so a batch only ever
 * reads state newer than the requests it answers.
 */
export class CoalescingBatcher<I, O> {
  private queue: Waiting<I, O>[] = [];
  private inFlight = 0;
  private pumpQueued = false;

  constructor(
    /** Answers each item, in the order given; the array must be as long as `items`. */
    private readonly runBatch: (items: I[]) => Promise<O[]>,
    private readonly options: CoalescingBatcherOptions<I>,
  ) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.pumpQueued) {
        this.pumpQueued = true;
        // Not queueMicrotask: fake timers (jest's) hold that back, a resolved promise they don't.
        void Promise.resolve().then(() => {
          this.pumpQueued = false;
          this.pump();
        });
      }
    });
  }

  private pump(): void {
    while (this.inFlight < this.options.maxInFlight && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.batchLength());
      this.inFlight++;
      void this.send(batch);
    }
  }

  /** How many of the queued items the next batch takes: up to maxBatch, within maxWeight. */
  private batchLength(): number {
    const { maxBatch, maxWeight, weightOf } = this.options;
    const limit = Math.min(maxBatch, this.queue.length);
    if (maxWeight === undefined || weightOf === undefined) return limit;
    let weight = weightOf(this.queue[0].item);
    let length = 1;
    while (length < limit) {
      weight += weightOf(this.queue[length].item);
      if (weight > maxWeight) break;
      length++;
    }
    return length;
  }

  private async send(batch: Waiting<I, O>[]): Promise<void> {
    try {
      const results = await this.runBatch(batch.map((w) => w.item));
      if (results.length !== batch.length) {
        throw new Error(`a batch of ${batch.length} got ${results.length} results`);
      }
      batch.forEach((w, i) => w.resolve(results[i]));
    } catch (err) {
      for (const w of batch) w.reject(err);
    } finally {
      this.inFlight--;
      this.pump();
    }
  }
}
