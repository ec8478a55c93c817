/** How many containers of one image a warm pool keeps ready, from its configuration and demand. */
export interface WarmPoolSizingOptions {
  /** Ready containers of the default image at all times; 0 disables the pool. */
  size: number;
  /** The most ready containers of any one image, however high demand was. */
  max: number;
  /** Demand is the most sandboxes asked for within any burst window… */
  burstWindowMs?: number;
  /** …over this much recent history; older demand is forgotten. */
  historyMs?: number;
}

const BURST_WINDOW_MS = 10_000;
const HISTORY_MS = 5 * 60_000;

/**
 * The target size of each image's pool: the configured size for the default image (0 for others),
 * raised to the largest burst of sandboxes asked for recently (so a pool sized for 2 that saw 20
 * runs start together keeps 20 ready for the next burst), never above `max`. A quiet pool shrinks
 * back once the burst is older than the history.
 */
export class WarmPoolSizing {
  private readonly demand = new Map<string, number[]>();
  private readonly burstWindowMs: number;
  private readonly historyMs: number;
  private readonly max: number;

  constructor(
    private readonly options: WarmPoolSizingOptions,
    private readonly defaultImage: string,
  ) {
    this.burstWindowMs = options.burstWindowMs ?? BURST_WINDOW_MS;
    this.historyMs = options.historyMs ?? HISTORY_MS;
    this.max = Math.max(options.size, options.max);
  }

  get enabled(): boolean {
    return this.options.size > 0 && this.max > 0;
  }

  /** The most ready containers of any one image. */
  get most(): number {
    return this.max;
  }

  /** One sandbox of `image` was asked for at `now` (pool hit or miss alike). */
  recordDemand(image: string, now: number): void {
    if (!this.enabled) return;
    const times = this.forget(image, now);
    times.push(now);
    this.demand.set(image, times);
  }

  /** The images whose pools may hold containers (the default and any asked for recently). */
  images(now: number): string[] {
    const images = new Set([this.defaultImage]);
    for (const image of [...this.demand.keys()]) {
      if (this.forget(image, now).length > 0) images.add(image);
      else this.demand.delete(image);
    }
    return [...images];
  }

  /** How many ready containers of `image` the pool should hold at `now`. */
  target(image: string, now: number): number {
    if (!this.enabled) return 0;
    const base = image === this.defaultImage ? this.options.size : 0;
    return Math.min(this.max, Math.max(base, this.peakBurst(this.forget(image, now))));
  }

  /** The most demand times within any one burst window (times ascending). */
  private peakBurst(times: number[]): number {
    let peak = 0;
    let first = 0;
    for (let last = 0; last < times.length; last++) {
      while (times[last] - times[first] >= this.burstWindowMs) first++;
      peak = Math.max(peak, last - first + 1);
    }
    return peak;
  }

  /** The image's demand times within the history, older ones dropped. */
  private forget(image: string, now: number): number[] {
    const times = this.demand.get(image) ?? [];
    const since = now - this.historyMs;
    let drop = 0;
    while (drop < times.length && times[drop] <= since) drop++;
    if (drop > 0) times.splice(0, drop);
    return times;
  }
}
