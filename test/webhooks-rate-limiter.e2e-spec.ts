import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import type { AppConfig } from '../src/config/app-config';
import { RedisConnections } from '../src/common/redis/redis-connections';
import { IngressRateLimiter, REDIS_TIMEOUT_MS } from '../src/ingress/rate-limiter';
import { TcpProxy } from './support/tcp-proxy';
import { REDIS_URL } from './support/test-app';

/** The ingress's per-webhook budgets on a real Redis: many concurrent hits go out as one call. */
describe('Ingress rate limiter', () => {
  const prefix = `amb_rl_${randomUUID().slice(0, 8)}`;
  const connections: RedisConnections[] = [];
  /** Redis commands the limiters made, counted as they are sent. */
  let commandsSent = 0;
  /**
   * Long enough for a loaded CI host (where Redis answered a first call after more than the
   * product's 250 ms): these tests are about what Redis decides, not about failing open, except
   * where the fail-open test sets the product's timeout back.
   */
  const PATIENT_MS = 15_000;
  const limiterOn = (url: string) => {
    const c = new RedisConnections({ redis: { url, prefix } } as AppConfig);
    const create = c.create.bind(c);
    c.create = (options) => {
      const client = create(options);
      const send = client.sendCommand.bind(client);
      client.sendCommand = (...args) => {
        commandsSent++;
        return send(...args);
      };
      return client;
    };
    connections.push(c);
    const limiter = new IngressRateLimiter(c);
    limiter.timeoutMs = PATIENT_MS;
    return limiter;
  };
  let proxy: TcpProxy | null = null;

  afterAll(async () => {
    proxy?.resume();
    await Promise.all(connections.map((c) => c.onApplicationShutdown()));
    await proxy?.stop();
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    await redis.quit();
  });

  it('allows exactly the limit of concurrent hits on one budget, each budget on its own', async () => {
    const limiter = limiterOn(REDIS_URL);
    const [a, b] = [randomUUID(), randomUUID()];
    await limiter.take(randomUUID(), 'deliveries', 5); // connected, and the script loaded in Redis
    const sentBefore = commandsSent;
    const decisions = await Promise.all([
      ...Array.from({ length: 8 }, () => limiter.take(a, 'deliveries', 5)),
      ...Array.from({ length: 3 }, () => limiter.take(b, 'deliveries', 5)),
      ...Array.from({ length: 3 }, () => limiter.take(a, 'auth_failures', 2)),
    ]);
    // Fourteen hits submitted together: one script call decides them all.
    expect(commandsSent - sentBefore).toBe(1);
    const allowed = (from: number, to: number) =>
      decisions.slice(from, to).filter((d) => d.allowed).length;
    expect(allowed(0, 8)).toBe(5);
    expect(allowed(8, 11)).toBe(3);
    expect(allowed(11, 14)).toBe(2);
    // First come, first served: the hits beyond the limit are the refused ones, told when to retry.
    expect(decisions.slice(0, 5).every((d) => d.allowed)).toBe(true);
    for (const d of decisions.slice(5, 8)) {
      expect(d).toEqual({ allowed: false, retryAfterSeconds: expect.any(Number) });
      const retry = (d as { retryAfterSeconds: number }).retryAfterSeconds;
      expect(retry).toBeGreaterThanOrEqual(1);
      expect(retry).toBeLessThanOrEqual(60);
    }
    // The budget is shared through Redis: another process's limiter sees the hits counted here.
    expect(await limiterOn(REDIS_URL).take(a, 'deliveries', 5)).toMatchObject({ allowed: false });
    expect(await limiterOn(REDIS_URL).take(b, 'deliveries', 5)).toEqual({ allowed: true });
  });

  /** Every window key's count of one budget, summed: what Redis holds as spent or leased. */
  const counted = async (budget: string, webhookId: string) => {
    const redis = new Redis(REDIS_URL);
    try {
      const keys = await redis.keys(`${prefix}:wh-rate:${budget}:${webhookId}:*`);
      const values = keys.length ? await redis.mget(...keys) : [];
      return values.reduce((sum, v) => sum + Number(v ?? 0), 0);
    } finally {
      await redis.quit();
    }
  };

  /**
   * The sliding minute weighs the last window less as the current one goes on: a test that counts
   * a budget to its end starts well inside a window, so the weights stay put while it runs.
   */
  const insideOneWindow = async () => {
    const left = 60_000 - (Date.now() % 60_000);
    if (left < 5_000) await new Promise((resolve) => setTimeout(resolve, left + 100));
  };

  it('spends leased tokens of a busy budget without a call, and two replicas never allow more than the limit', async () => {
    await insideOneWindow();
    const [a, b] = [limiterOn(REDIS_URL), limiterOn(REDIS_URL)];
    let clock = performance.now();
    a.leases.clock = b.leases.clock = () => clock;
    const hook = randomUUID();
    await a.take(randomUUID(), 'deliveries', 100); // connected, and the script loaded in Redis
    await b.take(randomUUID(), 'deliveries', 100);
    const sentBefore = commandsSent;
    let allowed = 0;
    const hits = async (n: number) => {
      for (let i = 0; i < n; i++) {
        if ((await (i % 2 ? b : a).take(hook, 'deliveries', 100)).allowed) allowed++;
      }
    };
    // Leases grow with the budget's hits, up to a tenth of it: far fewer calls than hits (and
    // with at most 2 × 10 tokens held, the first 80 hits are all allowed).
    await hits(80);
    expect(allowed).toBe(80);
    expect(commandsSent - sentBefore).toBeLessThan(25);
    // A refused hit is always Redis's decision (it may have been given tokens back meanwhile).
    await hits(80);
    // What one replica holds unspent the other cannot have: never more than the limit...
    expect(allowed).toBeLessThanOrEqual(100);
    expect(allowed).toBeGreaterThanOrEqual(80);
    expect(await counted('deliveries', hook)).toBe(100);
    // ... and once the leases have expired, what they did not spend is given back and allowed.
    clock += a.leases.leaseMs;
    await Promise.all([a.returnExpired(), b.returnExpired()]);
    expect(await counted('deliveries', hook)).toBe(allowed);
    await hits(40);
    clock += a.leases.leaseMs;
    await Promise.all([a.returnExpired(), b.returnExpired()]);
    expect(allowed).toBe(100);
    expect(await counted('deliveries', hook)).toBe(100);
  });

  it('gives its leased tokens back when the replica stops', async () => {
    const limiter = limiterOn(REDIS_URL);
    const hook = randomUUID();
    expect(await limiter.take(hook, 'deliveries', 60)).toEqual({ allowed: true });
    expect(await counted('deliveries', hook)).toBe(2); // the hit, and one leased beside it
    await limiter.beforeApplicationShutdown();
    expect(await counted('deliveries', hook)).toBe(1);
    // A budget under ten is never leased: its count is its hits.
    const small = randomUUID();
    await limiter.take(small, 'auth_failures', 9);
    expect(await counted('auth_failures', small)).toBe(1);
  });

  it('allows every hit (fails open) when Redis stops answering, and counts again once it does', async () => {
    proxy = new TcpProxy('127.0.0.1', Number(new URL(REDIS_URL).port || 6379));
    await proxy.start();
    const limiter = limiterOn(`redis://127.0.0.1:${proxy.port}`);
    const hook = randomUUID();
    expect(await limiter.take(hook, 'deliveries', 1)).toEqual({ allowed: true });
    expect(await limiter.take(hook, 'deliveries', 1)).toMatchObject({ allowed: false });

    const patient = limiter.timeoutMs;
    limiter.timeoutMs = REDIS_TIMEOUT_MS; // the product's
    proxy.pause();
    const stalled = await Promise.all(
      Array.from({ length: 5 }, () => limiter.take(hook, 'deliveries', 1)),
    );
    expect(stalled).toEqual(Array.from({ length: 5 }, () => ({ allowed: true })));

    proxy.resume();
    limiter.timeoutMs = patient;
    expect(await limiter.take(hook, 'deliveries', 1)).toMatchObject({ allowed: false });
  });
});
