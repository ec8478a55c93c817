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
   * The sliding minute weighs the last window less as the current one goes on: tests that count a
   * budget to its end run at one pinned instant, in the middle of a window.
   */
  const pinClock = () => {
    const pinned = Math.floor(Date.now() / 60_000) * 60_000 + 30_000;
    return jest.spyOn(Date, 'now').mockReturnValue(pinned);
  };
  afterEach(() => jest.restoreAllMocks());

  it('spends leased tokens of a busy budget without a call, and two replicas never allow more than the limit', async () => {
    pinClock();
    const [a, b] = [limiterOn(REDIS_URL), limiterOn(REDIS_URL)];
    let clock = 1_000_000; // whole milliseconds: sums of fractions would not add up exactly
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
    await Promise.all([a.beforeApplicationShutdown(), b.beforeApplicationShutdown()]);
  });

  it('gives back an expired lease in the same call as the next hits', async () => {
    pinClock();
    const limiter = limiterOn(REDIS_URL);
    let clock = 1_000_000; // whole milliseconds: sums of fractions would not add up exactly
    limiter.leases.clock = () => clock;
    const [busy, fresh] = [randomUUID(), randomUUID()];
    for (let i = 0; i < 3; i++) await limiter.take(busy, 'deliveries', 100);
    // Three hits: the third went to Redis with a lease of three beside it.
    expect(await counted('deliveries', busy)).toBe(6);
    clock += limiter.leases.leaseMs;
    const sentBefore = commandsSent;
    await Promise.all([
      limiter.take(fresh, 'deliveries', 100),
      limiter.take(busy, 'deliveries', 100),
    ]);
    expect(commandsSent - sentBefore).toBe(1);
    // busy: three unspent given back, then its hit and a new lease of three; fresh: a hit and one.
    expect(await counted('deliveries', busy)).toBe(7);
    expect(await counted('deliveries', fresh)).toBe(2);
    await limiter.beforeApplicationShutdown();
    expect(await counted('deliveries', busy)).toBe(4);
    expect(await counted('deliveries', fresh)).toBe(1);
  });

  it('gives back the lease of a call that answered after its hit was let through', async () => {
    const slow = new TcpProxy('127.0.0.1', Number(new URL(REDIS_URL).port || 6379));
    await slow.start();
    try {
      const limiter = limiterOn(`redis://127.0.0.1:${slow.port}`);
      await limiter.take(randomUUID(), 'deliveries', 100); // connected, the script loaded
      limiter.timeoutMs = REDIS_TIMEOUT_MS;
      const hook = randomUUID();
      slow.pause();
      expect(await limiter.take(hook, 'deliveries', 100)).toEqual({ allowed: true });
      slow.resume();
      // Stopping waits for the call still under way (patiently here: a loaded host answers late),
      // then gives back what it counted beside the hit.
      limiter.timeoutMs = PATIENT_MS;
      await limiter.beforeApplicationShutdown();
      expect(await counted('deliveries', hook)).toBe(1);
    } finally {
      slow.resume();
      await slow.stop();
    }
  });

  it('gives its leased tokens back when the replica stops', async () => {
    const limiter = limiterOn(REDIS_URL);
    const hook = randomUUID();
    expect(await limiter.take(hook, 'deliveries', 60)).toEqual({ allowed: true });
    expect(await counted('deliveries', hook)).toBe(2); // the hit, and one leased beside it
    // A budget under ten is never leased: its count is its hits.
    const small = randomUUID();
    await limiter.take(small, 'auth_failures', 9);
    expect(await counted('auth_failures', small)).toBe(1);
    // Hits still queued when stopping begins go out with no lease asked (and none held after).
    const queued = randomUUID();
    const first = limiter.take(hook, 'deliveries', 60);
    const behind = Array.from({ length: 3 }, (_, i) =>
      limiter.take(i ? randomUUID() : queued, 'deliveries', 60),
    );
    await limiter.beforeApplicationShutdown();
    await Promise.all([first, ...behind]);
    expect(await counted('deliveries', hook)).toBe(2); // its leased token spent, nothing held
    expect(await counted('deliveries', queued)).toBe(1);
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
