import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import Redis, { RedisOptions } from 'ioredis';
import { APP_CONFIG } from '../app-config.token';
import type { AppConfig } from '../../config/app-config';

export const REDIS = Symbol('REDIS');

/** Creates Redis connections for Ambient's own use (pub/sub, counters, presence) and closes them. */
@Injectable()
export class RedisConnections implements OnApplicationShutdown {
  private readonly clients: Redis[] = [];

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  /** Key prefix shared with the queues, so several deployments can share one Redis. */
  get prefix(): string {
    return this.config.redis.prefix;
  }

  create(
    options: Pick<RedisOptions, 'enableAutoPipelining' | 'autoResendUnfulfilledCommands'> = {},
  ): Redis {
    const client = new Redis(this.config.redis.url, {
      maxRetriesPerRequest: 3,
      enableReadyCheck: true,
      lazyConnect: false,
      ...options,
    });
    client.on('error', () => undefined); // reconnects by itself; callers see failed commands
    handleReconnectReplays(client);
    this.clients.push(client);
    return client;
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all(this.clients.map((c) => c.quit().catch(() => c.disconnect())));
  }
}

/**
 * After a reconnect ioredis re-subscribes (and re-selects the database) on its own, and leaves the
 * promise of that command unhandled: a connection closed before the answer comes (a shutdown just
 * after a Redis blip) rejects it with "Connection is closed.", and an unhandled rejection ends a
 * Node process. Every such call on these connections gets a handler; a caller still receives the
 * same promise, and sees its failure.
 */
function handleReconnectReplays(client: Redis): void {
  const replayed = ['subscribe', 'psubscribe', 'ssubscribe', 'select'] as const;
  const methods = client as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  for (const name of replayed) {
    const original = methods[name].bind(client);
    methods[name] = (...args: unknown[]) => {
      const answer = original(...args);
      answer.catch(() => undefined);
      return answer;
    };
  }
}
