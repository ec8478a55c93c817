import { createPool, Pool, PoolConnection } from 'mysql2';
import { currentRequest, withRequestContext } from '../common/request-context';
import {
  backgroundConnections,
  keepConnectionsForRequests,
  requestConnections,
} from './request-connections';

/** A pool of 3 on the test server, one connection kept for requests (two for other work). */
function gatedPool(port = Number(process.env.DATABASE_PORT ?? 3306)): Pool {
  const pool = createPool({
    host: process.env.DATABASE_HOST ?? '127.0.0.1',
    port,
    user: process.env.DATABASE_USER ?? 'root',
    password: process.env.DATABASE_PASSWORD ?? '',
    connectionLimit: 3,
  });
  keepConnectionsForRequests(pool, 1, () => currentRequest() !== undefined);
  return pool;
}

interface Acquisition {
  connection: Promise<PoolConnection>;
  settled: () => boolean;
}

function acquire(pool: Pool): Acquisition {
  let done = false;
  const connection = new Promise<PoolConnection>((resolve, reject) =>
    pool.getConnection((err, c) => {
      done = true;
      if (err) reject(err);
      else resolve(c);
    }),
  );
  return { connection, settled: () => done };
}

const inRequest = <T>(fn: () => T): T => withRequestContext({ requestId: 'r', ip: null }, fn);

async function serverThread(connection: PoolConnection): Promise<number> {
  const rows = await connection.promise().query('SELECT CONNECTION_ID() AS id');
  return (rows[0] as { id: number }[])[0].id;
}

describe('keepConnectionsForRequests (database)', () => {
  jest.setTimeout(30_000);
  let pool: Pool;
  beforeEach(() => {
    pool = gatedPool();
  });
  afterEach(async () => {
    await new Promise<void>((resolve) => pool.end(() => resolve()));
  });

  it('answers a request while work outside requests waits for a connection of its own', async () => {
    const first = await acquire(pool).connection;
    const second = await acquire(pool).connection;
    const third = acquire(pool);
    // Without the gate the third would take the last connection and the request would wait.
    const forRequest = await inRequest(() => acquire(pool)).connection;
    expect(await serverThread(forRequest)).toBeGreaterThan(0);
    expect(third.settled()).toBe(false);
    first.release();
    const thirdConnection = await third.connection;
    expect(thirdConnection).toBe(first);
    for (const c of [second, thirdConnection, forRequest]) c.release();
  });

  it('does not limit requests to the connections kept for them', async () => {
    const held = await Promise.all([1, 2, 3].map(() => inRequest(() => acquire(pool)).connection));
    const ids = await Promise.all(held.map(serverThread));
    expect(new Set(ids).size).toBe(3);
    held.forEach((c) => c.release());
  });

  it('frees the place of a connection destroyed while held', async () => {
    const first = await acquire(pool).connection;
    const second = await acquire(pool).connection;
    const third = acquire(pool);
    first.destroy();
    const replacement = await third.connection;
    expect(await serverThread(replacement)).toBeGreaterThan(0);
    second.release();
    replacement.release();
    // Both places are free again: two more acquisitions outside requests go through.
    const again = await Promise.all([acquire(pool).connection, acquire(pool).connection]);
    again.forEach((c) => c.release());
  });

  it("answers work still waiting when the pool ends with mysql2's error", async () => {
    await acquire(pool).connection;
    await acquire(pool).connection;
    const third = acquire(pool);
    const ended = new Promise<void>((resolve) => pool.end(() => resolve()));
    await expect(third.connection).rejects.toThrow('Pool is closed.');
    await ended;
    pool = gatedPool();
  });

  it('hands places to waiting work first come, first served, and reports what it holds', async () => {
    const first = await acquire(pool).connection;
    const second = await acquire(pool).connection;
    const waiting = [acquire(pool), acquire(pool), acquire(pool)];
    expect(backgroundConnections(pool)).toMatchObject({ inUse: 2, limit: 2, waiting: 3 });
    expect(backgroundConnections(pool)!.oldestWaitSeconds).toBeGreaterThanOrEqual(0);
    first.release();
    const next = await waiting[0].connection;
    expect(waiting.map((w) => w.settled())).toEqual([true, false, false]);
    second.release();
    await waiting[1].connection;
    expect(waiting[2].settled()).toBe(false);
    next.release();
    (await waiting[2].connection).release();
    (await waiting[1].connection).release();
    expect(backgroundConnections(pool)).toEqual({
      inUse: 0,
      limit: 2,
      waiting: 0,
      oldestWaitSeconds: 0,
    });
  });

  it('gates a callback outside a request that a request used before', async () => {
    const got: PoolConnection[] = [];
    let arrived = () => {};
    const take = (err: Error | null, connection?: PoolConnection) => {
      if (!err && connection) got.push(connection);
      arrived();
    };
    const until = (count: number) =>
      new Promise<void>((resolve) => {
        arrived = () => got.length >= count && resolve();
        arrived();
      });
    inRequest(() => pool.getConnection(take));
    await until(1);
    got.pop()!.release();
    for (let i = 0; i < 3; i += 1) pool.getConnection(take);
    await until(2);
    expect(backgroundConnections(pool)).toMatchObject({ inUse: 2, waiting: 1 });
    got[0].release();
    await until(3);
    got.slice(1).forEach((c) => c.release());
  });

  it('frees the places of acquisitions that fail', async () => {
    const refused = gatedPool(1);
    try {
      const attempts = [1, 2, 3, 4, 5].map(() => acquire(refused).connection);
      const outcomes = await Promise.allSettled(attempts);
      expect(outcomes.map((o) => o.status)).toEqual(Array(5).fill('rejected'));
      expect(backgroundConnections(refused)).toMatchObject({ inUse: 0, waiting: 0 });
    } finally {
      await new Promise<void>((resolve) => refused.end(() => resolve()));
    }
  });

  it('answers work that comes after the end at once', async () => {
    await acquire(pool).connection;
    await acquire(pool).connection;
    const ended = new Promise<void>((resolve) => pool.end(() => resolve()));
    await expect(acquire(pool).connection).rejects.toThrow('Pool is closed.');
    await ended;
    pool = gatedPool();
  });

  it('keeps nothing of a pool too small to share, and reports nothing then', async () => {
    const small = createPool({ host: '127.0.0.1', connectionLimit: 4 });
    keepConnectionsForRequests(small, requestConnections(4), () => false);
    expect(backgroundConnections(small)).toBeNull();
    await new Promise<void>((resolve) => small.end(() => resolve()));
  });

  it('keeps a fifth of the pool, none of a pool under 5', () => {
    expect(requestConnections(20)).toBe(4);
    expect(requestConnections(60)).toBe(12);
    expect(requestConnections(4)).toBe(0);
  });
});
