import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type Redis from 'ioredis';
import {
  DataSource,
  EntityManager,
  EntitySubscriberInterface,
  QueryRunner,
  TransactionCommitEvent,
  TransactionRollbackEvent,
} from 'typeorm';
import { APP_CONFIG } from '../app-config.token';
import type { AppConfig } from '../../config/app-config';
import { REDIS, RedisConnections } from '../redis/redis-connections';
import type { Invalidation, InvalidationBus } from './broadcast-cache';

type Listener = (invalidation: Invalidation | null) => void;

/** Encodes an invalidation as it travels on the channel. */
export function encodeInvalidations(invalidations: readonly Invalidation[]): string {
  return JSON.stringify(invalidations.map(({ topic, id }) => [topic, id]));
}

export function decodeInvalidations(text: string): Invalidation[] | null {
  try {
    const parsed = JSON.parse(text) as unknown;
    if (!Array.isArray(parsed)) return null;
    const out: Invalidation[] = [];
    for (const pair of parsed) {
      if (!Array.isArray(pair) || typeof pair[0] !== 'string' || typeof pair[1] !== 'string') {
        return null;
      }
      out.push({ topic: pair[0], id: pair[1] });
    }
    return out;
  } catch {
    return null;
  }
}

/** The channel every replica of a deployment hears invalidations on. */
export function invalidationChannel(prefix: string): string {
  return `${prefix}:invalidate`;
}

/**
 * Tells every replica's in-process caches (BroadcastCache) that rows changed, over one Redis
 * pub/sub channel. A change made in a transaction is announced once the transaction has
 * committed (before the caller's `commit` returns, so before the request that made it is
 * answered): announced earlier, another replica could read the old row again and cache it.
 * Fail safe: while the subscription is down (and until it is back and subscribed) the caches
 * serve and store nothing, and they are emptied when it drops and again when it is back.
 */
@Injectable()
export class Invalidations
  implements InvalidationBus, EntitySubscriberInterface, OnModuleInit, OnApplicationShutdown
{
  private readonly logger = new Logger('Invalidations');
  private readonly listeners: Listener[] = [];
  private readonly deferred = new WeakMap<QueryRunner, Invalidation[]>();
  private subscriber: Redis | null = null;
  private subscribed = false;
  private closing = false;

  constructor(
    @InjectDataSource() dataSource: DataSource,
    @Inject(REDIS) private readonly redis: Redis,
    private readonly connections: RedisConnections,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    dataSource.subscribers.push(this);
  }

  /** The longest a cache fed by these invalidations may serve an entry (0: caches are off). */
  get cacheTtlMs(): number {
    return this.config.redis.cacheTtlMs;
  }

  get live(): boolean {
    return this.subscribed;
  }

  private get channel(): string {
    return invalidationChannel(this.connections.prefix);
  }

  listen(listener: Listener): void {
    this.listeners.push(listener);
  }

  /**
   * Announces that rows changed: at once when `manager` is in no transaction, else when its
   * transaction commits (nothing when it rolls back). This replica's caches drop their entries
   * at the same moment; a failed publish is logged (other replicas' entries then live out their
   * TTL, unless their own subscription dropped too, which empties them).
   */
  async changed(
    manager: EntityManager | undefined,
    topic: string,
    ids: readonly string[],
  ): Promise<void> {
    if (ids.length === 0) return;
    const invalidations = ids.map((id) => ({ topic, id }));
    const queryRunner = manager?.queryRunner;
    if (queryRunner?.isTransactionActive) {
      const pending = this.deferred.get(queryRunner) ?? [];
      this.deferred.set(queryRunner, pending);
      pending.push(...invalidations);
      return;
    }
    await this.announce(invalidations);
  }

  onModuleInit(): void {
    const subscriber = this.connections.create();
    this.subscriber = subscriber;
    subscriber.on('message', (_channel: string, text: string) => {
      const invalidations = decodeInvalidations(text);
      // An unreadable message may have been about anything.
      if (!invalidations) return this.dropAll();
      for (const invalidation of invalidations) this.notify(invalidation);
    });
    subscriber.on('close', () => {
      if (this.subscribed)
        this.logger.warn('invalidation channel lost: caches off until it is back');
      this.subscribed = false;
      this.dropAll();
    });
    subscriber.on('ready', () => void this.resubscribe());
    // Not awaited: start-up never waits for it; until it is confirmed the caches are simply off.
    void this.resubscribe();
  }

  async onApplicationShutdown(): Promise<void> {
    this.closing = true;
    this.subscribed = false;
    // RedisConnections closes the connection itself.
  }

  afterTransactionCommit(event: TransactionCommitEvent): Promise<void> | void {
    if (event.queryRunner.isTransactionActive) return; // a savepoint: the outer commit decides
    const pending = this.deferred.get(event.queryRunner);
    this.deferred.delete(event.queryRunner);
    if (pending?.length) return this.announce(pending);
  }

  afterTransactionRollback(event: TransactionRollbackEvent): void {
    if (!event.queryRunner.isTransactionActive) this.deferred.delete(event.queryRunner);
  }

  private async announce(invalidations: Invalidation[]): Promise<void> {
    for (const invalidation of invalidations) this.notify(invalidation);
    await this.redis
      .publish(this.channel, encodeInvalidations(invalidations))
      .catch((err: Error) => {
        this.logger.error(
          `invalidation of ${invalidations.map((i) => `${i.topic} ${i.id}`).join(', ')} not ` +
            `broadcast (${err.message}): other replicas may serve it from cache for up to the TTL`,
        );
      });
  }

  /** (Re)subscribes; the caches start again, empty, once the subscription is confirmed. */
  private async resubscribe(): Promise<void> {
    const subscriber = this.subscriber;
    if (!subscriber || this.closing || this.subscribed) return;
    try {
      await subscriber.subscribe(this.channel);
    } catch (err) {
      this.logger.warn(`invalidation channel not subscribed: ${(err as Error).message}`);
      return;
    }
    if (this.closing || subscriber.status !== 'ready') return;
    this.dropAll();
    this.subscribed = true;
  }

  private notify(invalidation: Invalidation): void {
    for (const listener of this.listeners) listener(invalidation);
  }

  private dropAll(): void {
    for (const listener of this.listeners) listener(null);
  }
}
