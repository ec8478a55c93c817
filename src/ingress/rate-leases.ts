/** How long leased tokens may be spent before what is left goes back to the shared budget. */
export const LEASE_MS = 2_000;
/** A lease holds at most this share of a budget (a budget under 10 is never leased). */
export const LEASE_SHARE = 10;
/** Entries with no tokens and no hit for this long are forgotten. */
const IDLE_MS = 2 * LEASE_MS;

/** Tokens counted in Redis but not spent: `tokens` to take back off the window key `key`. */
export interface LeaseReturn {
  key: string;
  tokens: number;
}

interface Lease {
  tokens: number;
  /** The Redis window key the tokens were counted on (they go back to the same one). */
  key: string;
  expiresAt: number;
  /** A hit of this budget is in a script call that asks for a lease: no other asks meanwhile. */
  asking: boolean;
  periodStart: number;
  hitsThisPeriod: number;
  hitsLastPeriod: number;
  lastHitAt: number;
}

/**
 * The tokens a replica holds of busy budgets. A hit that goes to Redis may take a few more tokens
 * beside its own (counted there at once, so every replica's decisions still add up to the limit);
 * the budget's next hits on this replica spend them without a Redis call. What is not spent within
 * LEASE_MS is given back. A lease is sized by the budget's recent hits here, at most a tenth of
 * the limit, so a replica never keeps more from the others than it is about to use.
 */
export class RateLeases {
  private readonly leases = new Map<string, Lease>();
  private returns: LeaseReturn[] = [];
  private stopping = false;

  constructor(
    /** Monotonic milliseconds. */
    public clock: () => number = () => performance.now(),
    public leaseMs = LEASE_MS,
  ) {}

  /** Spends a leased token of `budget` when one is held and unexpired: the hit is allowed. */
  spend(budget: string): boolean {
    const lease = this.leases.get(budget);
    if (!lease) return false;
    const now = this.clock();
    this.countHit(lease, now);
    if (lease.tokens === 0) return false;
    if (now < lease.expiresAt) {
      lease.tokens--;
      return true;
    }
    this.giveBack(lease);
    return false;
  }

  /** How many tokens to ask Redis for beside a hit on `budget` that goes there (0: none). */
  ask(budget: string, limit: number): number {
    const most = Math.floor(limit / LEASE_SHARE);
    if (most < 1 || this.stopping) return 0;
    const now = this.clock();
    let lease = this.leases.get(budget);
    if (!lease) {
      lease = {
        tokens: 0,
        key: '',
        expiresAt: 0,
        asking: false,
        periodStart: now,
        hitsThisPeriod: 0,
        hitsLastPeriod: 0,
        lastHitAt: now,
      };
      this.countHit(lease, now);
      this.leases.set(budget, lease);
    }
    if (lease.asking) return 0;
    lease.asking = true;
    return Math.min(most, Math.max(1, lease.hitsLastPeriod, lease.hitsThisPeriod));
  }

  /**
   * What Redis answered to a hit that asked: `extra` tokens counted on `key` beside the hit's own
   * (0 when refused or not asked), spendable for `forMs` at most (the rest of the window they were
   * counted on: spent later, they would weigh less than a hit); null when the call failed.
   */
  settle(budget: string, granted: { key: string; extra: number; forMs?: number } | null): void {
    const lease = this.leases.get(budget);
    if (!lease?.asking) return;
    lease.asking = false;
    if (!granted || granted.extra === 0) return;
    const forMs = Math.min(this.leaseMs, granted.forMs ?? this.leaseMs);
    // Stopping, or the window already over: nobody may spend these.
    if (this.stopping || forMs <= 0) return this.giveBackLate(granted.key, granted.extra);
    this.giveBack(lease); // a lease is asked for only without unexpired tokens: none are lost
    lease.tokens = granted.extra;
    lease.key = granted.key;
    lease.expiresAt = this.clock() + forMs;
  }

  /** Tokens Redis counted for a hit whose answer came too late to be held: to be given back. */
  giveBackLate(key: string, tokens: number): void {
    if (tokens > 0) this.returns.push({ key, tokens });
  }

  /** Up to `most` of the unspent tokens waiting to go back, taken off the list. */
  takeReturns(most: number): LeaseReturn[] {
    return this.returns.splice(0, most);
  }

  /** Every lease past its time gives its tokens back; idle budgets are forgotten. */
  expire(): void {
    const now = this.clock();
    for (const [budget, lease] of this.leases) {
      if (lease.tokens > 0 && now >= lease.expiresAt) this.giveBack(lease);
      if (lease.tokens === 0 && !lease.asking && now - lease.lastHitAt >= IDLE_MS) {
        this.leases.delete(budget);
      }
    }
  }

  /** The replica is stopping: every lease gives its tokens back, and none is asked for again. */
  stop(): void {
    this.stopping = true;
    for (const lease of this.leases.values()) this.giveBack(lease);
  }

  /** Tokens waiting to be given back. */
  get pendingReturns(): number {
    return this.returns.length;
  }

  get stopped(): boolean {
    return this.stopping;
  }

  /** Budgets known here (for tests and the bounded-memory check). */
  get size(): number {
    return this.leases.size;
  }

  private giveBack(lease: Lease): void {
    if (lease.tokens > 0) this.returns.push({ key: lease.key, tokens: lease.tokens });
    lease.tokens = 0;
  }

  private countHit(lease: Lease, now: number): void {
    if (now - lease.periodStart >= this.leaseMs) {
      const periods = Math.floor((now - lease.periodStart) / this.leaseMs);
      lease.hitsLastPeriod = periods === 1 ? lease.hitsThisPeriod : 0;
      lease.hitsThisPeriod = 0;
      lease.periodStart += periods * this.leaseMs;
    }
    lease.hitsThisPeriod++;
    lease.lastHitAt = now;
  }
}
