import type { Pool, PoolConnection } from 'mysql2';
import type { DataSource } from 'typeorm';
import type { MysqlDriver } from 'typeorm/driver/mysql/MysqlDriver';

type ConnectionCallback = (err: Error | null, connection?: PoolConnection) => void;

/** The connections a pool keeps for HTTP requests: a fifth of it (4 of the default 20). */
export function requestConnections(poolSize: number): number {
  return Math.floor(poolSize / 5);
}

/** What work outside requests holds of a gated pool, and what of it waits (metrics). */
export interface BackgroundConnections {
  /** Connections held (or being acquired) by work outside requests. */
  inUse: number;
  /** The most it may hold: the pool's size less the connections kept for requests. */
  limit: number;
  /** Acquisitions of such work waiting for one of its places. */
  waiting: number;
  /** How long the longest of them has waited (0 when none waits). */
  oldestWaitSeconds: number;
}

const gates = new WeakMap<Pool, () => BackgroundConnections>();

/** The mysql2 pool TypeORM's driver made for the data source (where the gate is installed). */
export function mysqlPool(dataSource: DataSource): Pool {
  return (dataSource.driver as MysqlDriver).pool as Pool;
}

/** The pool's figures, or null when it keeps nothing for requests. */
export function backgroundConnections(pool: Pool): BackgroundConnections | null {
  return gates.get(pool)?.() ?? null;
}

/**
 * Keeps `reserved` of the pool's connections for HTTP requests. Work outside a request (run
 * executions, schedules, sweepers) holds at most `connectionLimit - reserved` at once and waits
 * for more in a FIFO of its own, so a request never waits behind a burst of that work in
 * mysql2's queue: in one api+worker process, 100 runs' model answers arriving together queued
 * 83 statements for 20 connections, and a request waited up to 285 ms for one.
 *
 * A connection counts against the limit from the acquisition until mysql2 takes it back
 * (`releaseConnection`: a release, and a destroy or a lost connection while held). For a
 * process that serves no HTTP requests, keep nothing: the places would stay empty.
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
  /**
   * Callbacks made here, which went past the gate: mysql2 calls getConnection again with one it
   * had queued when a connection is lost, and it must not be gated (or counted) twice.
   */
  const passed = new WeakSet<ConnectionCallback>();
  /** Connections held by work outside requests. */
  const held = new Set<PoolConnection>();
  const waiting: { cb: ConnectionCallback; since: number }[] = [];
  let counted = 0;
  let ended = false;

  const take = (cb: ConnectionCallback) => {
    counted += 1;
    const counting: ConnectionCallback = (err, connection) => {
      // A connection already held was handed on through a second wrapper (a traced callback
      // mysql2 queued): one place for it is enough.
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
    while ((counted < backgroundLimit || ended) && waiting.length) take(waiting.shift()!.cb);
  };

  pool.getConnection = ((cb: ConnectionCallback) => {
    if (passed.has(cb) || ended) return getConnection(cb);
    if (inRequest()) {
      // A closure of its own, so that a callback used again outside a request is gated then.
      const direct: ConnectionCallback = (err, connection) => cb(err, connection);
      passed.add(direct);
      return getConnection(direct);
    }
    if (counted < backgroundLimit && !waiting.length) return take(cb);
    waiting.push({ cb, since: Date.now() });
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

  gates.set(pool, () => ({
    inUse: counted,
    limit: backgroundLimit,
    waiting: waiting.length,
    oldestWaitSeconds: waiting.length ? (Date.now() - waiting[0].since) / 1000 : 0,
  }));
}
