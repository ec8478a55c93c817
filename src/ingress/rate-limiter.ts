import { Injectable, Logger } from '@nestjs/common';
import type Redis from 'ioredis';
import { CoalescingBatcher } from '../common/coalescing-batcher';
import { RedisConnections } from '../common/redis/redis.module';

const WINDOW_MS = 60_000;
export const REDIS_TIMEOUT_MS = 250;
const MAX_HITS_PER_CALL = 100;

/**
 * Sliding-window estimate over two fixed one-minute windows: the previous window's count
 * weighted by how much of it still overlaps the last minute, plus the current count. Allows and
 * counts in one atomic step, so every replica shares the budget. One call decides several hits
 * (keys in pairs, ARGV: elapsed, ttl, then one limit per pair), in order, so two hits on the same
 * budget in one call see each other.
 */
const HITS = `
local elapsed = tonumber(ARGV[1])
local answers = {}
for i = 1, #KEYS, 2 do
  local n = (i + 1) / 2
  local cur = tonumber(redis.call('GET', KEYS[i]) or '0')
  local prev = tonumber(redis.call('GET', KEYS[i + 1]) or '0')
  if prev * (1 - elapsed) + cur + 1 > tonumber(ARGV[n + 2]) then
    answers[n] = 0
  else
    redis.call('INCR', KEYS[i])
    redis.call('PEXPIRE', KEYS[i], ARGV[2])
    answers[n] = 1
  end
end
return answers`;

export type Budget = 'deliveries' | 'auth_failures';

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

interface Hit {
  webhookId: string;
  budget: Budget;
  limit: number;
}

type HitsCommand = (numberOfKeys: number, ...keysAndArgs: (string | number)[]) => Promise<number[]>;

@Injectable()
export class IngressRateLimiter {
  private readonly logger = new Logger('IngressRateLimiter');
  private lastWarning = 0;
  private readonly hits: HitsCommand;
  /** How long a script call may take before its hits are allowed (fail open). */
  timeoutMs = REDIS_TIMEOUT_MS;
  /**
   * The hits of concurrent deliveries go to Redis as one script call (one command to build,
   * send, run and parse instead of one per delivery).
   */
  private readonly batcher = new CoalescingBatcher<Hit, RateDecision | Error>(
    (batch) => this.decide(batch),
    { maxBatch: MAX_HITS_PER_CALL, maxInFlight: 2 },
  );

  constructor(private readonly connections: RedisConnections) {
    const redis: Redis = connections.create();
    redis.defineCommand('ambientRateHits', { lua: HITS });
    const client = redis as unknown as { ambientRateHits: HitsCommand };
    this.hits = client.ambientRateHits.bind(client);
  }

  /**
   * Counts one event against a webhook's budget. When Redis does not answer promptly the
   * request is allowed (fail open): the delivery is still committed in MySQL.
   */
  async take(webhookId: string, budget: Budget, limit: number): Promise<RateDecision> {
    const answer = await this.batcher.submit({ webhookId, budget, limit });
    if (!(answer instanceof Error)) return answer;
    if (Date.now() - this.lastWarning > 10_000) {
      this.lastWarning = Date.now();
      this.logger.warn(`rate limiting skipped: ${answer.message}`);
    }
    return { allowed: true };
  }

  /** One script call for the batch; every hit is answered, with the error when Redis was not. */
  private async decide(batch: Hit[]): Promise<(RateDecision | Error)[]> {
    // One clock for the call: the script weighs every pair with the same `elapsed`.
    const nowMs = Date.now();
    const window = Math.floor(nowMs / WINDOW_MS);
    const keys: string[] = [];
    for (const hit of batch) {
      const key = (w: number) =>
        `${this.connections.prefix}:wh-rate:${hit.budget}:${hit.webhookId}:${w}`;
      keys.push(key(window), key(window - 1));
    }
    const args = [(nowMs % WINDOW_MS) / WINDOW_MS, WINDOW_MS * 2, ...batch.map((h) => h.limit)];
    let timer: NodeJS.Timeout | undefined;
    try {
      const answers = await Promise.race([
        this.hits(keys.length, ...keys, ...args),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error('Redis did not answer in time')),
            this.timeoutMs,
          );
        }),
      ]);
      const refused: RateDecision = {
        allowed: false,
        retryAfterSeconds: Math.max(1, Math.ceil((WINDOW_MS - (nowMs % WINDOW_MS)) / 1000)),
      };
      return answers.map((a) => (a === 1 ? { allowed: true } : refused));
    } catch (err) {
      return batch.map(() => (err instanceof Error ? err : new Error(String(err))));
    } finally {
      clearTimeout(timer);
    }
  }
}
