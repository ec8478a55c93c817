import { EventEmitter } from 'node:events';
import { BurstGate } from './burst-gate';
import { WarmPoolSizing } from './warm-pool-sizing';

/**
 * At most this many containers of one image are being made for the pool at once; while a burst
 * of sandboxes is in progress (see BurstGate), one, and only while none is ready: the burst does
 * not compete with container starts, and sandboxes still opening during a long one find one.
 */
const PARALLEL_STARTS = 4;
/** After a container could not be made, the pool of that image waits this long to try again. */
const RETRY_AFTER_MS = 5_000;
/**
 * How often targets are re-evaluated and ready containers looked at: those gone behind the pool's
 * back are replaced without waiting for demand, and those above the target that none of the
 * period's hand-outs needed are given up (a pool shrinks once its burst is forgotten).
 */
const RESIZE_EVERY_MS = 30_000;
/**
 * How long a container handed out to come back (see take) keeps a place in its pool: the pool makes
 * none that its return would then find the pool too full for. In a stream of runs that keeps the
 * pool at its most, making one at every hand-out made a container that the run's return pushed
 * out (a create, a start and a removal per run, the daemons' dearest work). A run that holds its
 * container longer has one made in its place at the pool's next look.
 */
const LOAN_COUNTS_MS = RESIZE_EVERY_MS;

/**
 * Containers made and started ahead of demand, per image: `take` hands a ready one to exactly one
 * sandbox and never waits; the pool then makes fresh ones in the background, four at a time, or
 * while its gate sees a burst of sandboxes in progress just one when none is ready. A container
 * its sandbox emptied comes back (`giveBack`, see container-returns.ts) and is ready again, up
 * to the pool's most; others are removed by their sandboxes. A container that is not
 * `alive` (removed behind the pool's back, as a daemon restart does) is never held or handed out:
 * it is discarded when made so, at hand-out, and at each periodic look.
 *
 * Events: `filled` (image, ready count) once an image's pool holds its target (made or given
 * back); `failed` (image,
 * error) when a container could not be made (that image's pool pauses, then tries again).
 */
export class DockerWarmPool<T> extends EventEmitter {
  private readonly ready = new Map<string, T[]>();
  private readonly starting = new Map<string, number>();
  private readonly pausedUntil = new Map<string, number>();
  private readonly making = new Set<Promise<void>>();
  /** The fewest ready containers of each image since the last periodic look (see trimIdle). */
  private readonly fewest = new Map<string, number>();
  /**
   * The containers handed out to come back, by image, then by their key (`keyOf`): when each was
   * taken (see LOAN_COUNTS_MS).
   */
  private readonly lent = new Map<string, Map<unknown, number>>();
  private resizeTimer: NodeJS.Timeout | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private refillTimer: NodeJS.Timeout | null = null;
  private draining = false;

  constructor(
    private readonly sizing: WarmPoolSizing,
    /** Creates and starts one idle container of `image`. */
    private readonly make: (image: string) => Promise<T>,
    /** Removes a container the pool does not hand out after all. */
    private readonly discard: (item: T) => Promise<void>,
    /** Whether a ready container still runs (cheap: asked at every hand-out). */
    private readonly alive: (item: T) => boolean = () => true,
    private readonly now: () => number = Date.now,
    /** While it sees a burst, the pool makes one container at a time. */
    private readonly gate = new BurstGate(),
    /** What a container is, whatever object carries it (a given-back one is another object). */
    private readonly keyOf: (item: T) => unknown = (item) => item,
  ) {
    super();
  }

  get enabled(): boolean {
    return this.sizing.enabled;
  }

  /** Whether it drains (see drain): it hands out, takes back and makes nothing any more. */
  get stopping(): boolean {
    return this.draining;
  }

  /** Starts filling the pools and keeps their sizes to their targets. */
  start(): void {
    if (!this.enabled || this.draining || this.resizeTimer) return;
    this.resizeTimer = setInterval(() => this.resizeAll(true), RESIZE_EVERY_MS);
    this.resizeTimer.unref();
    this.resizeAll();
  }

  /**
   * A ready container of `image`, or null (no wait) when there is none; counts as demand. Ready
   * containers that are no longer alive are discarded on the way, and the pool makes others in
   * their place. `comesBack` says whether the one handed out is to come back (see LOAN_COUNTS_MS):
   * the caller then gives it back, or settles its place.
   */
  take(image: string, comesBack: (item: T) => boolean = () => false): T | null {
    if (!this.enabled || this.draining) return null;
    this.sizing.recordDemand(image, this.now());
    const ready = this.ready.get(image) ?? [];
    let item: T | null = null;
    while (item === null && ready.length > 0) {
      const next = ready.shift()!;
      if (this.alive(next)) item = next;
      else void this.discard(next).catch(() => undefined);
    }
    // Expected back (the caller gives it back or says it will not, see settle).
    if (item !== null && comesBack(item)) {
      const lent = this.lent.get(image) ?? new Map<unknown, number>();
      lent.set(this.keyOf(item), this.now());
      this.lent.set(image, lent);
    }
    this.fewest.set(image, Math.min(this.fewest.get(image) ?? ready.length, ready.length));
    this.resize(image);
    return item;
  }

  /**
   * A container back from the sandbox it was handed to, emptied (see container-returns.ts): ready
   * again, even above the target, and first in line (the next hand-out takes it rather than one
   * never used; the periodic look gives up those that stay idle). Discarded (settles once removed,
   * false) when the pool drains, it is gone, or the pool holds its image's most already.
   */
  async giveBack(image: string, item: T): Promise<boolean> {
    this.settleLoan(image, item);
    const ready = this.ready.get(image) ?? [];
    if (this.draining || !this.enabled || !this.alive(item) || ready.length >= this.sizing.most) {
      // Gone: the place it kept is made up for now.
      if (!this.alive(item)) this.resize(image);
      await this.discard(item).catch(() => undefined);
      return false;
    }
    ready.unshift(item);
    this.ready.set(image, ready);
    this.emitIfFilled(image, ready.length);
    return true;
  }

  /**
   * A container taken to come back will not (its sandbox's container is removed instead): the pool
   * makes one in its place now rather than at its next look.
   */
  settle(image: string, item: T): void {
    this.settleLoan(image, item);
    this.resize(image);
  }

  private settleLoan(image: string, item: T): void {
    const lent = this.lent.get(image);
    lent?.delete(this.keyOf(item));
    if (lent?.size === 0) this.lent.delete(image);
  }

  /** Containers of `image` handed out to come back within LOAN_COUNTS_MS. */
  private comingBack(image: string, now: number): number {
    let count = 0;
    for (const at of this.lent.get(image)?.values() ?? []) if (now - at < LOAN_COUNTS_MS) count++;
    return count;
  }

  /** Ready containers of `image`. */
  readyCount(image: string): number {
    return this.ready.get(image)?.length ?? 0;
  }

  /**
   * Removes every ready container and those being made, all at once (a make the daemon is slow to
   * answer does not hold up the others' removal); the pool makes none afterwards.
   */
  async drain(): Promise<void> {
    this.draining = true;
    if (this.resizeTimer) clearInterval(this.resizeTimer);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.refillTimer) clearTimeout(this.refillTimer);
    this.resizeTimer = this.retryTimer = this.refillTimer = null;
    const items = [...this.ready.values()].flat();
    this.ready.clear();
    // Those being made discard themselves once made (see makeOne).
    await Promise.all([
      ...this.making,
      ...items.map((item) => this.discard(item).catch(() => undefined)),
    ]);
  }

  private resizeAll(periodic = false): void {
    const images = new Set([...this.sizing.images(this.now()), ...this.ready.keys()]);
    for (const image of images) {
      this.discardDead(image);
      if (periodic) this.trimIdle(image);
      this.resize(image);
    }
  }

  /**
   * Gives up the ready containers above the target that stayed unused since the last look: as
   * many as the fewest ready ones then exceeded the target. Containers that came back above it
   * and were taken again meanwhile are kept, so a steady stream of runs neither makes nor removes
   * any.
   */
  private trimIdle(image: string): void {
    const ready = this.ready.get(image) ?? [];
    const target = this.sizing.target(image, this.now());
    const idle = Math.min(ready.length, this.fewest.get(image) ?? ready.length) - target;
    if (idle > 0) {
      for (const extra of ready.splice(ready.length - idle)) {
        void this.discard(extra).catch(() => undefined);
      }
    }
    this.fewest.set(image, ready.length);
  }

  private discardDead(image: string): void {
    const ready = this.ready.get(image);
    if (!ready) return;
    const alive = ready.filter((item) => this.alive(item));
    if (alive.length === ready.length) return;
    for (const item of ready) {
      if (!alive.includes(item)) void this.discard(item).catch(() => undefined);
    }
    this.ready.set(image, alive);
  }

  /** Makes containers up to the image's target (those above it go at the periodic look). */
  private resize(image: string): void {
    if (this.draining) return;
    const now = this.now();
    const target = this.sizing.target(image, now);
    const ready = this.ready.get(image) ?? [];
    if (ready.length === 0 && target === 0) {
      this.ready.delete(image);
      this.fewest.delete(image);
    }
    if ((this.pausedUntil.get(image) ?? 0) > now) return;
    const parallel = !this.busy() ? PARALLEL_STARTS : ready.length === 0 ? 1 : 0;
    let starting = this.starting.get(image) ?? 0;
    // None that a container coming back would then find the pool too full for.
    const room = this.sizing.most - this.comingBack(image, now);
    while (ready.length + starting < Math.min(target, room) && starting < parallel) {
      starting++;
      const made = this.makeOne(image).finally(() => this.making.delete(made));
      this.making.add(made);
    }
    this.starting.set(image, starting);
  }

  private async makeOne(image: string): Promise<void> {
    let item: T | null = null;
    try {
      item = await this.make(image);
    } catch (error) {
      this.pausedUntil.set(image, this.now() + RETRY_AFTER_MS);
      this.retryLater();
      this.emit('failed', image, error instanceof Error ? error : new Error(String(error)));
    } finally {
      this.starting.set(image, (this.starting.get(image) ?? 1) - 1);
    }
    if (item === null) return;
    if (this.draining) {
      await this.discard(item).catch(() => undefined);
      return;
    }
    if (!this.alive(item)) {
      // Removed while it was being made: holding it would count it as ready for good.
      await this.discard(item).catch(() => undefined);
      this.pausedUntil.set(image, this.now() + RETRY_AFTER_MS);
      this.retryLater();
      this.emit('failed', image, new Error('the container was gone before it was ready'));
      return;
    }
    const ready = this.ready.get(image) ?? [];
    if (ready.length >= this.sizing.most) {
      // Containers given back while it was being made filled the pool meanwhile.
      await this.discard(item).catch(() => undefined);
      this.emitIfFilled(image, ready.length);
      return;
    }
    ready.push(item);
    this.ready.set(image, ready);
    this.resize(image);
    this.emitIfFilled(image, ready.length);
  }

  /** `filled` once the image's pool holds its target and makes no more. */
  private emitIfFilled(image: string, ready: number): void {
    const target = this.sizing.target(image, this.now());
    if (ready >= target && (this.starting.get(image) ?? 0) === 0) this.emit('filled', image, ready);
  }

  /** Whether a burst is in progress (then a timer resizes the pools once it may be over). */
  private busy(): boolean {
    const waitMs = this.gate.waitMs();
    if (waitMs === 0) return false;
    if (!this.refillTimer) {
      this.refillTimer = setTimeout(() => {
        this.refillTimer = null;
        this.resizeAll();
      }, waitMs);
      this.refillTimer.unref();
    }
    return true;
  }

  private retryLater(): void {
    if (this.retryTimer || this.draining) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.resizeAll();
    }, RETRY_AFTER_MS);
    this.retryTimer.unref();
  }
}
