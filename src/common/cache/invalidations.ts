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
import { randomHex } from '../ids';
import { REDIS, RedisConnections } from '../redis/redis-connections';
import { BroadcastAcks, type AckOutcome } from './broadcast-acks';
import type { Invalidation, InvalidationBus } from './broadcast-cache';

type Listener = (invalidation: Invalidation | null) => void;

/** Who asks for acknowledgements of a broadcast, and under which number (see BroadcastAcks). */
export interface AckRequest {
  from: string;
  seq: number;
}

/** A message on the channel: the invalidations, and who wants them acknowledged. */
export interface InvalidationMessage {
  invalidations: Invalidation[];
  ack?: AckRequest;
}

/**
 * Encodes invalidations as they travel on the channel: a bare array of `[topic, id]` pairs (what
 * the CLI sends, asking for no acknowledgement) or, with `ack`, `{from, seq, items}`.
 */
export function encodeInvalidations(
  invalidations: readonly Invalidation[],
  ack?: AckRequest,
): string {
  const items = invalidations.map(({ topic, id }) => [topic, id]);
  return JSON.stringify(ack ? { from: ack.from, seq: ack.seq, items } : items);
}

export function decodeInvalidations(text: string): InvalidationMessage | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  if (Array.isArray(parsed)) {
    const invalidations = decodePairs(parsed);
    return invalidations && { invalidations };
  }
  const { from, seq, items } = (parsed ?? {}) as Record<string, unknown>;
  if (typeof from !== 'string' || !Number.isSafeInteger(seq) || !Array.isArray(items)) return null;
  const invalidations = decodePairs(items);
  return invalidations && { invalidations, ack: { from, seq: seq as number } };
}

function decodePairs(pairs: unknown[]): Invalidation[] | null {
  const out: Invalidation[] = [];
  for (const pair of pairs) {
    if (!Array.isArray(pair) || typeof pair[0] !== 'string' || typeof pair[1] !== 'string') {
      return null;
    }
    out.push({ topic: pair[0], id: pair[1] });
  }
  return out;
}

/** The channel every replica of a deployment hears invalidations on. */
export function invalidationChannel(prefix: string): string {
  return `${prefix}:invalidate`;
}

/** Where the replica `replica` hears the acknowledgements of its broadcasts. */
export function acknowledgementChannel(prefix: string, replica: string): string {
  return `${prefix}:invalidate:ack:${replica}`;
}

/** Who waits for acknowledgements of a broadcast: its counter, the name they reach, how long. */
export interface AcknowledgementWait {
  acks: BroadcastAcks;
  /** The `replica` of acknowledgementChannel, to which the sender is subscribed. */
  from: string;
  timeoutMs: number;
}

/**
 * Publishes `invalidations` on the deployment's channel and, when `asked`, waits for every
 * receiver's acknowledgement (at most `asked.timeoutMs`): null when none was asked for. Rejects
 * when the PUBLISH fails.
 */
export async function publishInvalidations(
  redis: Redis,
  prefix: string,
  invalidations: readonly Invalidation[],
  asked: AcknowledgementWait | null,
): Promise<AckOutcome | null> {
  const channel = invalidationChannel(prefix);
  if (!asked) {
    await redis.publish(channel, encodeInvalidations(invalidations));
    return null;
  }
  const seq = asked.acks.open();
  let receivers: number;
  try {
    receivers = await redis.publish(
      channel,
      encodeInvalidations(invalidations, { from: asked.from, seq }),
    );
  } catch (err) {
    asked.acks.abandon(seq);
    throw err;
  }
  return asked.acks.wait(seq, receivers, asked.timeoutMs);
}

function describeInvalidations(invalidations: readonly Invalidation[]): string {
  return invalidations.map((i) => `${i.topic} ${i.id}`).join(', ');
}

/** What to warn of when some receivers did not acknowledge in time; null when all did. */
export function missingAcknowledgements(
  invalidations: readonly Invalidation[],
  outcome: AckOutcome | null,
  timeoutMs: number,
): string | null {
  if (!outcome || outcome.acknowledged >= outcome.expected) return null;
  return (
    `invalidation of ${describeInvalidations(invalidations)}: ` +
    `${outcome.expected - outcome.acknowledged} of ${outcome.expected} replicas did not ` +
    `acknowledge it within ${timeoutMs} ms; they may serve it from cache until they read it`
  );
}

/**
 * Tells every replica's in-process caches (BroadcastCache) that rows changed, over one Redis
 * pub/sub channel. A change made in a transaction is announced once the transaction has
 * committed (before the caller's `commit` returns, so before the request that made it is
 * answered): announced earlier, another replica could read the old row again and cache it.
 * Redis's reply to PUBLISH says only that the message is on its way to every subscriber, not that
 * they have read it: a replica could still answer its next request from the old entry. So every
 * replica acknowledges what it has applied (on the announcer's own channel, see
 * acknowledgementChannel), and `changed` returns once as many replicas as PUBLISH reached have
 * done so, or after `AMBIENT_CACHE_ACK_TIMEOUT_MS` (a replica that has stopped reading; logged).
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
  /** This process on the channel: where its broadcasts' acknowledgements come back. */
  private readonly replica = randomHex(8);
  private readonly acks = new BroadcastAcks();
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

  private get ackChannel(): string {
    return acknowledgementChannel(this.connections.prefix, this.replica);
  }

  listen(listener: Listener): void {
    this.listeners.push(listener);
  }

  /**
   * Announces that rows changed: at once when `manager` is in no transaction, else when its
   * transaction commits (nothing when it rolls back). This replica's caches drop their entries
   * at the same moment, and the announcement returns once every other replica has too (see the
   * class). A failed publish is logged (other replicas' entries then live out their TTL, unless
   * their own subscription dropped too, which empties them).
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
    subscriber.on('message', (channel: string, text: string) => {
      if (channel === this.ackChannel) this.acks.acknowledge(Number(text));
      else this.heard(text);
    });
    subscriber.on('close', () => {
      if (this.subscribed)
        this.logger.warn('invalidation channel lost: caches off until it is back');
      this.subscribed = false;
      this.dropAll();
      this.acks.endAll();
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

  private heard(text: string): void {
    const message = decodeInvalidations(text);
    // An unreadable message may have been about anything.
    if (!message) return this.dropAll();
    for (const invalidation of message.invalidations) this.notify(invalidation);
    const { ack } = message;
    if (!ack) return;
    if (ack.from === this.replica) return this.acks.acknowledge(ack.seq);
    // A lost acknowledgement only makes the announcer wait out its bound.
    this.redis
      .publish(acknowledgementChannel(this.connections.prefix, ack.from), String(ack.seq))
      .catch(() => undefined);
  }

  private async announce(invalidations: Invalidation[]): Promise<void> {
    for (const invalidation of invalidations) this.notify(invalidation);
    const timeoutMs = this.config.redis.cacheAckTimeoutMs;
    // Acknowledgements come back on this process's subscription: without it, none would be heard.
    const asked =
      this.subscribed && timeoutMs > 0 ? { acks: this.acks, from: this.replica, timeoutMs } : null;
    let outcome: AckOutcome | null;
    try {
      outcome = await publishInvalidations(
        this.redis,
        this.connections.prefix,
        invalidations,
        asked,
      );
    } catch (err) {
      this.logger.error(
        `invalidation of ${describeInvalidations(invalidations)} not broadcast ` +
          `(${(err as Error).message}): other replicas may serve it from cache for up to the TTL`,
      );
      return;
    }
    const missing = missingAcknowledgements(invalidations, outcome, timeoutMs);
    if (missing) this.logger.warn(missing);
  }

  /** (Re)subscribes; the caches start again, empty, once the subscription is confirmed. */
  private async resubscribe(): Promise<void> {
    const subscriber = this.subscriber;
    if (!subscriber || this.closing || this.subscribed) return;
    try {
      await subscriber.subscribe(this.channel, this.ackChannel);
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
