import { Injectable, Logger } from '@nestjs/common';
import type Redis from 'ioredis';
import { RedisConnections } from '../common/redis/redis.module';

const WINDOW_MS = 60_000;
const REDIS_TIMEOUT_MS = 250;

/**
 * Sliding-window estimate over two fixed one-minute windows: the previous window's count
 * weighted by how much of it still overlaps the last minute, plus the current count. Allows and
 * counts in one atomic step, so every replica shares the budget.
 */
const HIT = `
local cur = tonumber(redis.call('GET', KEYS[1]) or '0')
local prev = tonumber(redis.call('GET', KEYS[2]) or '0')
if prev * (1 - tonumber(ARGV[2])) + cur + 1 > tonumber(ARGV[1]) then return 0 end
redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1`;

export type Budget = 'deliveries' | 'auth_failures';

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

type HitCommand = (
  cur: string,
  prev: string,
  limit: number,
  elapsed: number,
  ttl: number,
) => Promise<number>;

@Injectable()
export class IngressRateLimiter {
  private readonly logger = new Logger('IngressRateLimiter');
  private lastWarning = 0;
  private readonly hit: HitCommand;
  private readonly redis: Redis;

  constructor(private readonly connections: RedisConnections) {
    // Its own connection with auto-pipelining: the hits of concurrent deliveries go to Redis in
    // one write instead of one each.
    this.redis = connections.create({ enableAutoPipelining: true });
    this.redis.defineCommand('ambientRateHit', { numberOfKeys: 2, lua: HIT });
    const client = this.redis as unknown as { ambientRateHit: HitCommand };
    this.hit = client.ambientRateHit.bind(client);
  }

  /**
   * Counts one event against a webhook's budget. When Redis does not answer promptly the
   * request is allowed (fail open): the delivery is still committed in MySQL.
   */
  async take(
    webhookId: string,
    budget: Budget,
    limit: number,
    nowMs = Date.now(),
  ): Promise<RateDecision> {
    const window = Math.floor(nowMs / WINDOW_MS);
    const elapsed = (nowMs % WINDOW_MS) / WINDOW_MS;
    const key = (w: number) => `${this.connections.prefix}:wh-rate:${budget}:${webhookId}:${w}`;
    let timer: NodeJS.Timeout | undefined;
    try {
      const allowed = await Promise.race([
        this.hit(key(window), key(window - 1), limit, elapsed, WINDOW_MS * 2),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error('Redis did not answer in time')),
            REDIS_TIMEOUT_MS,
          );
        }),
      ]);
      if (allowed === 1) return { allowed: true };
      return {
        allowed: false,
        retryAfterSeconds: Math.max(1, Math.ceil((WINDOW_MS - (nowMs % WINDOW_MS)) / 1000)),
      };
    } catch (err) {
      if (Date.now() - this.lastWarning > 10_000) {
        this.lastWarning = Date.now();
        this.logger.warn(`rate limiting skipped: ${(err as Error).message}`);
      }
      return { allowed: true };
    } finally {
      clearTimeout(timer);
    }
  }
}
