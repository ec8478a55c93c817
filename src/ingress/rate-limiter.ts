import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import type Redis from 'ioredis';
import { CoalescingBatcher } from '../common/coalescing-batcher';
import { RedisConnections } from '../common/redis/redis.module';
import { RateLeases } from './rate-leases';

const WINDOW_MS = 60_000;
export const REDIS_TIMEOUT_MS = 250;
const MAX_HITS_PER_CALL = 100;
const MAX_RETURNS_PER_CALL = 200;

/**
 * Sliding-window estimate over two fixed one-minute windows: the previous window's count
 * weighted by how much of it still overlaps the last minute, plus the current count. Allows and
 * counts in one atomic step, so every replica shares the budget. One call first takes back the
 * unspent tokens of expired leases (the keys after the hits' pairs, ARGV: the amounts), then
 * decides several hits (keys in pairs; ARGV: elapsed, ttl, the number of hits, one limit per
 * hit, then the tokens each asks for beside its own), in order, so two hits on the same budget in
 * one call see each other. Each answer is the tokens counted: 0 refused, 1 the hit alone, more
 * with a lease.
 */
const HITS = `
local elapsed = tonumber(ARGV[1])
local hits = tonumber(ARGV[3])
for r = 1, #KEYS - 2 * hits do
  local key = KEYS[2 * hits + r]
  local held = tonumber(redis.call('GET', key) or '0')
  if held > 0 then
    redis.call('DECRBY', key, math.min(held, tonumber(ARGV[3 + 2 * hits + r])))
  end
end
local answers = {}
for n = 1, hits do
  local cur = tonumber(redis.call('GET', KEYS[2 * n - 1]) or '0')
  local prev = tonumber(redis.call('GET', KEYS[2 * n]) or '0')
  local room = tonumber(ARGV[3 + n]) - (prev * (1 - elapsed) + cur)
  if room < 1 then
    answers[n] = 0
  else
    local counted = math.min(1 + tonumber(ARGV[3 + hits + n]), math.floor(room))
    redis.call('INCRBY', KEYS[2 * n - 1], counted)
    redis.call('PEXPIRE', KEYS[2 * n - 1], ARGV[2])
    answers[n] = counted
  end
end
return answers`;

export type Budget = 'deliveries' | 'auth_failures';

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

interface Hit {
  /** `<budget>:<webhook id>`: the budget's name in RateLeases and in its Redis keys. */
  name: string;
  limit: number;
  /** Tokens asked for beside the hit's own, as a lease (RateLeases). */
  lease: number;
}

type HitsCommand = (numberOfKeys: number, ...keysAndArgs: (string | number)[]) => Promise<number[]>;

const ALLOWED: RateDecision = { allowed: true };

@Injectable()
export class IngressRateLimiter implements BeforeApplicationShutdown {
  private readonly logger = new Logger('IngressRateLimiter');
  private lastWarning = 0;
  private readonly hits: HitsCommand;
  /** How long a script call may take before its hits are allowed (fail open). */
  timeoutMs = REDIS_TIMEOUT_MS;
  /** Tokens of busy budgets held here, spent without a Redis call. */
  readonly leases = new RateLeases();
  private expiryTimer: NodeJS.Timeout | null = null;
  /** Script calls sent and not yet answered (a stopping replica waits for their leases). */
  private readonly commands = new Set<Promise<number[]>>();
  /**
   * The hits of concurrent deliveries go to Redis as one script call (one command to build,
   * send, run and parse instead of one per delivery).
   */
  private readonly batcher = new CoalescingBatcher<Hit, RateDecision | Error>(
    (batch) => this.decide(batch),
    { maxBatch: MAX_HITS_PER_CALL, maxInFlight: 2 },
  );

  constructor(private readonly connections: RedisConnections) {
    // A script call is never sent twice: after a reconnect its hits were already let through
    // (fail open), and a replayed call would give tokens back twice or lease what no one holds.
    const redis: Redis = connections.create({ autoResendUnfulfilledCommands: false });
    redis.defineCommand('ambientRateHits', { lua: HITS });
    const client = redis as unknown as { ambientRateHits: HitsCommand };
    this.hits = client.ambientRateHits.bind(client);
  }

  /**
   * Counts one event against a webhook's budget. When Redis does not answer promptly the
   * request is allowed (fail open): the delivery is still committed in MySQL.
   */
  async take(webhookId: string, budget: Budget, limit: number): Promise<RateDecision> {
    const name = `${budget}:${webhookId}`;
    if (this.leases.spend(name)) return ALLOWED;
    const lease = this.leases.ask(name, limit);
    if (lease > 0) this.expireLeasesSoon();
    const answer = await this.batcher.submit({ name, limit, lease });
    if (!(answer instanceof Error)) return answer;
    this.warnRarely(`rate limiting skipped: ${answer.message}`);
    return ALLOWED;
  }

  /**
   * Gives back what expired leases did not spend (the timer's work; public for tests). Tokens
   * that cannot be given back (Redis unreachable) weigh until they leave the sliding minute.
   */
  async returnExpired(): Promise<void> {
    this.leases.expire();
    for (;;) {
      const returns = this.leases.takeReturns(MAX_RETURNS_PER_CALL);
      if (returns.length === 0) return;
      try {
        await this.call(
          [],
          returns.map((r) => r.key),
          [0, WINDOW_MS * 2, 0, ...returns.map((r) => r.tokens)],
        );
      } catch (err) {
        this.warnRarely(`leased tokens not given back: ${(err as Error).message}`);
        return;
      }
    }
  }

  /**
   * A stopping replica gives its leased tokens back, so the others may spend them: those held,
   * and those of calls still under way (the HTTP server still answers until after this hook).
   */
  async beforeApplicationShutdown(): Promise<void> {
    this.leases.stop();
    if (this.expiryTimer) clearInterval(this.expiryTimer);
    this.expiryTimer = null;
    // Hits queued behind the calls under way go out after these: wait for them too, up to a bound.
    const deadline = performance.now() + 2 * this.timeoutMs;
    while (this.commands.size > 0 && performance.now() < deadline) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled([...this.commands]),
        new Promise((resolve) => (timer = setTimeout(resolve, deadline - performance.now()))),
      ]);
      clearTimeout(timer);
      await new Promise((resolve) => setImmediate(resolve)); // the batcher sends what queued
    }
    await this.returnExpired();
  }

  /** One script call for the batch; every hit is answered, with the error when Redis was not. */
  private async decide(batch: Hit[]): Promise<(RateDecision | Error)[]> {
    // One clock for the call: the script weighs every pair with the same `elapsed`.
    const nowMs = Date.now();
    const window = Math.floor(nowMs / WINDOW_MS);
    const keys: string[] = [];
    for (const hit of batch) {
      const key = (w: number) => `${this.connections.prefix}:wh-rate:${hit.name}:${w}`;
      keys.push(key(window), key(window - 1));
    }
    const returns = this.leases.takeReturns(MAX_RETURNS_PER_CALL);
    if (this.leases.stopped) {
      // Asked before the replica began stopping: a lease now would be held by no one.
      batch = batch.map((hit) => {
        if (hit.lease > 0) this.leases.settle(hit.name, null);
        return { ...hit, lease: 0 };
      });
    }
    const args = [
      (nowMs % WINDOW_MS) / WINDOW_MS,
      WINDOW_MS * 2,
      batch.length,
      ...batch.map((h) => h.limit),
      ...batch.map((h) => h.lease),
      ...returns.map((r) => r.tokens),
    ];
    // A call answered after its hits were let through (fail open) still counted their leases.
    const giveBackLate = (answers: number[]) => {
      answers.forEach((counted, i) => this.leases.giveBackLate(keys[2 * i], counted - 1));
      if (answers.some((counted) => counted > 1)) this.expireLeasesSoon();
    };
    try {
      const answers = await this.call(
        keys,
        returns.map((r) => r.key),
        args,
        giveBackLate,
      );
      // The rest of the window the tokens were counted on (the call may have crossed its end).
      const forMs = (window + 1) * WINDOW_MS - Date.now();
      const refused: RateDecision = {
        allowed: false,
        retryAfterSeconds: Math.max(1, Math.ceil((WINDOW_MS - (nowMs % WINDOW_MS)) / 1000)),
      };
      return answers.map((counted, i) => {
        const hit = batch[i];
        if (hit.lease > 0) {
          const extra = Math.max(0, counted - 1);
          this.leases.settle(hit.name, { key: keys[2 * i], extra, forMs });
        }
        return counted >= 1 ? ALLOWED : refused;
      });
    } catch (err) {
      for (const hit of batch) {
        if (hit.lease > 0) this.leases.settle(hit.name, null);
      }
      return batch.map(() => (err instanceof Error ? err : new Error(String(err))));
    }
  }

  /** The script, given up on after `timeoutMs`; `onLate` gets an answer that came after that. */
  private async call(
    hitKeys: string[],
    returnKeys: string[],
    args: number[],
    onLate?: (answers: number[]) => void,
  ): Promise<number[]> {
    const command = this.hits(
      hitKeys.length + returnKeys.length,
      ...hitKeys,
      ...returnKeys,
      ...args,
    );
    this.commands.add(command);
    const forget = () => void this.commands.delete(command);
    command.then(forget, forget);
    let timer: NodeJS.Timeout | undefined;
    let late = false;
    try {
      return await Promise.race([
        command,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            late = true;
            reject(new Error('Redis did not answer in time'));
          }, this.timeoutMs);
        }),
      ]);
    } finally {
      clearTimeout(timer);
      if (late && onLate) command.then(onLate, () => undefined);
    }
  }

  /** Gives back unspent tokens within a quarter of a lease's time after it expires. */
  private expireLeasesSoon(): void {
    if (this.expiryTimer || this.leases.stopped) return;
    this.expiryTimer = setInterval(() => {
      if (this.leases.size === 0 && this.leases.pendingReturns === 0 && this.expiryTimer) {
        clearInterval(this.expiryTimer);
        this.expiryTimer = null;
        return;
      }
      void this.returnExpired();
    }, this.leases.leaseMs / 4);
    this.expiryTimer.unref();
  }

  private warnRarely(message: string): void {
    if (Date.now() - this.lastWarning > 10_000) {
      this.lastWarning = Date.now();
      this.logger.warn(message);
    }
  }
}
