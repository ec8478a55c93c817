import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnModuleDestroy,
  OnModuleInit,
} from '@nestjs/common';
import { getQueueToken } from '@nestjs/bull';
import { DiscoveryService, MetadataScanner, ModuleRef, Reflector } from '@nestjs/core';
import type { Job, Queue } from 'bull';
import { processJob, TracedJobData } from '../tracing';
import { APP_CONFIG } from '../app-config.token';
import type { AppConfig } from '../../config/app-config';
import { CONSUMED_QUEUES, ConsumedQueue } from './consumed-queues';
import {
  QUEUE_PROCESSOR,
  QueueProcessorHooks,
  QueueProcessorMetadata,
} from './queue-processor.decorator';

interface Handler {
  meta: QueueProcessorMetadata;
  instance: QueueProcessorHooks & Record<string, unknown>;
  method: string;
  /** `Class.method`, for start-up errors and logs. */
  label: string;
}

interface Consumer {
  queue: Queue;
  handlers: Handler[];
  /** The jobs its handlers are running now. */
  running: Set<Promise<unknown>>;
}

/**
 * The one place queue handlers are wired. At init it finds every `@QueueProcessor` method and
 * fails start-up (one line naming the queue) on a job with two handlers or a queue this process's
 * roles must consume without one; at bootstrap it registers the handlers of this process's roles
 * (concurrency from the config, each job in a CONSUMER span continuing its producer's trace, one
 * error listener per queue); at shutdown, first of all (it belongs to the root module), it stops
 * taking jobs and lets the processors end theirs before any pool closes.
 */
@Injectable()
export class QueueProcessorExplorer
  implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy
{
  private readonly logger = new Logger('QueueProcessors');
  private consumers: Consumer[] = [];

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(CONSUMED_QUEUES) private readonly consumed: readonly ConsumedQueue[],
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    private readonly moduleRef: ModuleRef,
  ) {}

  onModuleInit(): void {
    const handlers = this.discover();
    const byJob = new Map<string, Handler>();
    for (const handler of handlers) {
      const key = `${handler.meta.queue}\u0000${handler.meta.job}`;
      const other = byJob.get(key);
      if (other) {
        throw new Error(
          `queue "${handler.meta.queue}": two processors of job "${handler.meta.job}" (${other.label} and ${handler.label})`,
        );
      }
      byJob.set(key, handler);
    }
    const active = handlers.filter((handler) => this.config.roles.includes(handler.meta.role));
    for (const { queue, job, role } of this.consumed) {
      if (!this.config.roles.includes(role)) continue;
      if (!active.some((handler) => handler.meta.queue === queue && handler.meta.job === job)) {
        throw new Error(
          `queue "${queue}": no processor of job "${job}" (the ${role} role consumes it)`,
        );
      }
    }
    const byQueue = new Map<string, Consumer>();
    for (const handler of active) {
      const name = handler.meta.queue;
      const consumer = byQueue.get(name) ?? {
        queue: this.queue(name),
        handlers: [],
        running: new Set<Promise<unknown>>(),
      };
      consumer.handlers.push(handler);
      byQueue.set(name, consumer);
    }
    this.consumers = [...byQueue.values()];
  }

  onApplicationBootstrap(): void {
    for (const { queue, handlers, running } of this.consumers) {
      queue.on('error', (err: Error) =>
        this.logger.warn(`queue ${queue.name} error: ${err.message}`),
      );
      for (const { meta, instance, method, label } of handlers) {
        if (instance.jobCompleted) {
          const completed = instance.jobCompleted.bind(instance);
          queue.on('completed', (job: Job, result: unknown) => {
            if (job.name === meta.job) completed(job, result);
          });
        }
        if (instance.jobFailed) {
          const failed = instance.jobFailed.bind(instance);
          queue.on('failed', (job: Job, err: Error) => {
            if (job.name === meta.job) failed(job, err);
          });
        }
        const work = instance[method] as (job: Job) => Promise<unknown>;
        const concurrency = meta.concurrency(this.config);
        void queue
          .process(meta.job, concurrency, (job: Job<TracedJobData>) => {
            const done = processJob(queue.name, job, meta.attributes?.(job.data) ?? {}, () =>
              work.call(instance, job),
            );
            running.add(done);
            const forget = () => running.delete(done);
            done.then(forget, forget);
            return done;
          })
          .catch((err: Error) =>
            this.logger.error(`processor of ${queue.name} stopped: ${err.message}`),
          );
        this.logger.log(`${label} processes ${queue.name} (concurrency ${concurrency})`);
      }
    }
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.all(this.consumers.map((consumer) => this.stop(consumer)));
    this.consumers = [];
  }

  /**
   * Takes no new jobs; the running ones end by the processors' drain, or are waited for. Bull's
   * own wait for its active jobs is not used: it also waits for its blocking fetch loop, which
   * after a Redis reconnect took 20 s to settle with no job running.
   */
  private async stop({ queue, handlers, running }: Consumer): Promise<void> {
    const drains = handlers.flatMap(({ instance }) =>
      instance.drain ? [instance.drain.bind(instance)] : [],
    );
    const paused = queue.pause(true, true).catch(() => undefined);
    await Promise.all(drains.map((drain) => drain().catch(() => undefined)));
    await Promise.all([...running].map((job) => job.catch(() => undefined)));
    await paused;
  }

  private discover(): Handler[] {
    const handlers: Handler[] = [];
    for (const wrapper of this.discovery.getProviders()) {
      const { instance } = wrapper;
      if (!instance || typeof instance !== 'object' || !wrapper.isDependencyTreeStatic()) continue;
      const prototype = Object.getPrototypeOf(instance) as object;
      for (const method of this.scanner.getAllMethodNames(prototype)) {
        const target = (instance as Record<string, unknown>)[method];
        if (typeof target !== 'function') continue;
        const meta = this.reflector.get<QueueProcessorMetadata | undefined>(
          QUEUE_PROCESSOR,
          target,
        );
        if (!meta) continue;
        handlers.push({
          meta,
          instance: instance as Handler['instance'],
          method,
          label: `${instance.constructor.name}.${method}`,
        });
      }
    }
    return handlers;
  }

  private queue(name: string): Queue {
    try {
      return this.moduleRef.get<Queue>(getQueueToken(name), { strict: false });
    } catch {
      throw new Error(`queue "${name}": has a processor but is not registered with BullModule`);
    }
  }
}
