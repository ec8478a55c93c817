import type { Pool, PoolConnection } from 'mysql2';

type ConnectionCallback = (err: Error | null, connection?: PoolConnection) => void;

/** The connections a pool keeps for HTTP requests: a fifth of it (4 of the default 20). */
export function requestConnections(poolSize: number): number {
  return Math.floor(poolSize / 5);
}

/**
 * Keeps `reserved` of the pool's connections for HTTP requests. Work outside a request (run
 * executions, schedules, sweepers) holds at most `connectionLimit - reserved` at once and waits
 * for more in a queue of its own, so a request never waits behind a burst of that work in
 * mysql2's queue: in one api+worker process, 100 runs' model answers arriving together queued
 * 80 statements for 20 connections, and a run list waited up to 140 ms for one.
 *
 * A connection counts against the limit from the acquisition until mysql2 takes it back
 * (`releaseConnection`: a release, and a destroy or a lost connection while held).
 */
export function keepConnectionsForRequests(
  pool: Pool,
  reserved: number,
  inRequest: () => boolean,
): void {
  const limit = (pool as unknown as { config: { connectionLimit: number } }).config.connectionLimit;
  if (reserved <= 0 || reserved >= limit) return;
  const backgroundLimit = limit - reserved;
  const getConnection = pool.getConnection.bind(pool) as (cb: ConnectionCallback) => void;
  const releaseConnection = pool.releaseConnection.bind(pool);
  const end = pool.end.bind(pool) as (cb?: (err: Error | null) => void) => void;
  /** Callbacks that went past the gate once: mysql2 calls getConnection again with a queued one. */
  const passed = new WeakSet<ConnectionCallback>();
  /** Connections held by work outside requests. */
  const held = new Set<PoolConnection>();
  const waiting: ConnectionCallback[] = [];
  let counted = 0;
  let ended = false;

  const take = (cb: ConnectionCallback) => {
    counted += 1;
    const counting: ConnectionCallback = (err, connection) => {
      if (err || !connection || held.has(connection)) {
        counted -= 1;
        admit();
      } else {
        held.add(connection);
      }
      cb(err, connection);
    };
    passed.add(counting);
    getConnection(counting);
  };
  const admit = () => {
    while ((counted < backgroundLimit || ended) && waiting.length) take(waiting.shift()!);
  };

  pool.getConnection = ((cb: ConnectionCallback) => {
    if (passed.has(cb)) return getConnection(cb);
    if (inRequest()) {
      passed.add(cb);
      return getConnection(cb);
    }
    if (counted < backgroundLimit && !waiting.length) return take(cb);
    waiting.push(cb);
  }) as Pool['getConnection'];

  pool.releaseConnection = (connection: PoolConnection) => {
    releaseConnection(connection);
    if (held.delete(connection)) {
      counted -= 1;
      admit();
    }
  };

  // Work still waiting at the end is answered as mysql2 answers it: "Pool is closed."
  pool.end = ((cb?: (err: Error | null) => void) => {
    end(cb);
    ended = true;
    admit();
  }) as Pool['end'];
}
