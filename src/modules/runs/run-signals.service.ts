import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import Redis from 'ioredis';
import { REDIS, RedisConnections } from '../../common/redis/redis.module';

type Listener = (runId: string) => void;

/**
 * Cross-process signals about runs over Redis pub/sub: a cancel (or a finish-task from the
 * execution's own run-scoped key) accepted by any API replica reaches the worker executing the
 * run. Signals are hints; the database state is the truth, and workers also notice a cancelled run
 * when their lease renewal finds it no longer theirs, and a requested finish when the harness ends.
 */
@Injectable()
export class RunSignals implements OnApplicationShutdown {
  private readonly logger = new Logger('RunSignals');
  private readonly listeners = new Map<string, Set<Listener>>();
  private readonly finishListeners = new Map<string, Set<Listener>>();
  private subscriber: Redis | null = null;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    private readonly connections: RedisConnections,
  ) {}

  private get channel(): string {
    return `${this.connections.prefix}:run-cancel`;
  }

  /** Where cancels are published (the self-hosted worker gateway listens to every one). */
  get cancelChannel(): string {
    return this.channel;
  }

  private get finishChannel(): string {
    return `${this.connections.prefix}:run-finish`;
  }

  /** Where replicas announce queued runs for a team's self-hosted worker host. */
  get selfHostedWorkChannel(): string {
    return `${this.connections.prefix}:self-hosted-work`;
  }

  async publishSelfHostedWork(teamId: string, workerHost: string): Promise<void> {
    const hint = JSON.stringify({ team_id: teamId, worker_host: workerHost });
    await this.redis.publish(this.selfHostedWorkChannel, hint).catch((err: Error) => {
      this.logger.warn(`self-hosted work hint not published (${err.message}); the sweep offers it`);
    });
  }

  async publishCancel(runId: string): Promise<void> {
    await this.redis.publish(this.channel, runId).catch((err: Error) => {
      this.logger.warn(
        `cancel signal for ${runId} not published (${err.message}); lease check will catch it`,
      );
    });
  }

  /** The execution asked to finish (its finish request is stored on the run's timeline). */
  async publishFinish(runId: string): Promise<void> {
    await this.redis.publish(this.finishChannel, runId).catch((err: Error) => {
      this.logger.warn(
        `finish signal for ${runId} not published (${err.message}); applied when the harness ends`,
      );
    });
  }

  /** Calls `listener` when a cancel for `runId` arrives; returns the unsubscribe function. */
  async onCancel(runId: string, listener: Listener): Promise<() => void> {
    return this.listen(this.listeners, runId, listener);
  }

  /** Calls `listener` when a finish for `runId` arrives; returns the unsubscribe function. */
  async onFinish(runId: string, listener: Listener): Promise<() => void> {
    return this.listen(this.finishListeners, runId, listener);
  }

  private async listen(
    listeners: Map<string, Set<Listener>>,
    runId: string,
    listener: Listener,
  ): Promise<() => void> {
    await this.ensureSubscribed();
    const set = listeners.get(runId) ?? new Set<Listener>();
    set.add(listener);
    listeners.set(runId, set);
    return () => {
      set.delete(listener);
      if (set.size === 0) listeners.delete(runId);
    };
  }

  private async ensureSubscribed(): Promise<void> {
    if (this.subscriber) return;
    this.subscriber = this.connections.create();
    this.subscriber.on('message', (channel: string, runId: string) => {
      const listeners = channel === this.finishChannel ? this.finishListeners : this.listeners;
      for (const listener of listeners.get(runId) ?? []) listener(runId);
    });
    await this.subscriber.subscribe(this.channel, this.finishChannel);
  }

  async onApplicationShutdown(): Promise<void> {
    this.listeners.clear();
    this.finishListeners.clear();
  }
}
