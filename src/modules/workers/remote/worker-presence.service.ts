import { Inject, Injectable } from '@nestjs/common';
import Redis from 'ioredis';
import { REDIS, RedisConnections } from '../../../common/redis/redis.module';
import type { WorkerConnection } from './worker-connection';

/** How often each replica re-announces its connections; an entry lives three times as long. */
export const PRESENCE_REFRESH_MS = 10_000;
const PRESENCE_TTL_MS = 3 * PRESENCE_REFRESH_MS;

export interface PresenceEntry {
  worker_host: string;
  connected_at: string;
  last_seen_at: string;
}

export interface ConnectedWorker {
  worker_host: string;
  connection_count: number;
  connected_at: string;
  last_seen_at: string;
}

/**
 * Which worker connections exist, across every API replica, kept in Redis per team: a sorted
 * set of connection ids scored by expiry, and a hash of their details. A replica that dies stops
 * refreshing and its connections vanish after the TTL; "may be briefly stale", as Oz says.
 */
@Injectable()
export class WorkerPresence {
  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    private readonly connections: RedisConnections,
  ) {}

  private keys(teamId: string): { ids: string; info: string } {
    const ids = `${this.connections.prefix}:self-hosted:presence:${teamId}`;
    return { ids, info: `${ids}:info` };
  }

  /** Records (or refreshes) connections; their entries expire unless announced again. */
  async announce(connections: WorkerConnection[]): Promise<void> {
    if (connections.length === 0) return;
    const expiresAt = Date.now() + PRESENCE_TTL_MS;
    const pipeline = this.redis.multi();
    const touched = new Set<string>();
    for (const conn of connections) {
      const { ids, info } = this.keys(conn.teamId);
      const entry: PresenceEntry = {
        worker_host: conn.workerHost,
        connected_at: conn.connectedAt.toISOString(),
        last_seen_at: conn.lastSeenAt.toISOString(),
      };
      pipeline.zadd(ids, expiresAt, conn.id).hset(info, conn.id, JSON.stringify(entry));
      touched.add(conn.teamId);
    }
    for (const teamId of touched) {
      const { ids, info } = this.keys(teamId);
      pipeline.pexpire(ids, 2 * PRESENCE_TTL_MS).pexpire(info, 2 * PRESENCE_TTL_MS);
    }
    await pipeline.exec();
  }

  async withdraw(conn: WorkerConnection): Promise<void> {
    const { ids, info } = this.keys(conn.teamId);
    await this.redis.multi().zrem(ids, conn.id).hdel(info, conn.id).exec();
  }

  /** The team's connected workers, one entry per worker host, sorted by host. */
  async list(teamId: string): Promise<ConnectedWorker[]> {
    const { ids, info } = this.keys(teamId);
    const now = Date.now();
    const expired = await this.redis.zrangebyscore(ids, '-inf', now);
    if (expired.length) {
      await this.redis
        .multi()
        .zrem(ids, ...expired)
        .hdel(info, ...expired)
        .exec();
    }
    const live = await this.redis.zrangebyscore(ids, now, '+inf');
    if (live.length === 0) return [];
    const entries = (await this.redis.hmget(info, ...live))
      .filter((json): json is string => json !== null)
      .map((json) => JSON.parse(json) as PresenceEntry);
    return summarizeWorkers(entries);
  }
}

/** Groups connections by worker host: how many, the earliest connect, the latest sign of life. */
export function summarizeWorkers(entries: PresenceEntry[]): ConnectedWorker[] {
  const byHost = new Map<string, ConnectedWorker>();
  for (const entry of entries) {
    const worker = byHost.get(entry.worker_host);
    if (!worker) {
      byHost.set(entry.worker_host, { ...entry, connection_count: 1 });
      continue;
    }
    worker.connection_count += 1;
    if (entry.connected_at < worker.connected_at) worker.connected_at = entry.connected_at;
    if (entry.last_seen_at > worker.last_seen_at) worker.last_seen_at = entry.last_seen_at;
  }
  return [...byHost.values()]
    .map(({ worker_host, connection_count, connected_at, last_seen_at }) => ({
      worker_host,
      connection_count,
      connected_at,
      last_seen_at,
    }))
    .sort((a, b) => (a.worker_host < b.worker_host ? -1 : a.worker_host > b.worker_host ? 1 : 0));
}
