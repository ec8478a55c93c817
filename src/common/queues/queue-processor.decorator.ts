import { SetMetadata } from '@nestjs/common';
import type { Attributes } from '@opentelemetry/api';
import type { AppConfig, Role } from '../../config/app-config';

export const QUEUE_PROCESSOR = 'ambient:queue-processor';

export interface QueueProcessorOptions<Data = unknown> {
  /** The job name this method handles. */
  job: string;
  /** Only a process with this role registers the handler. */
  role: Role;
  /** Jobs one process handles at once, read from the config at start-up. */
  concurrency: (config: AppConfig) => number;
  /** Span attributes of the job's CONSUMER span (the queue and job id are always set). */
  attributes?: (data: Data) => Attributes;
}

export interface QueueProcessorMetadata extends QueueProcessorOptions {
  queue: string;
}

/**
 * Declares the method as the handler of `queue`'s `job` jobs; `QueueProcessorExplorer` finds it
 * at start-up, checks that every consumed queue has exactly one handler, and registers it.
 * `queue` is the name the queue is registered under with BullModule (its injection token).
 */
export function QueueProcessor<Data>(
  queue: string,
  options: QueueProcessorOptions<Data>,
): MethodDecorator {
  return SetMetadata<string, QueueProcessorMetadata>(QUEUE_PROCESSOR, {
    queue,
    ...(options as QueueProcessorOptions),
  });
}

/** What a processor's class may add to the handler: hooks the explorer calls for it. */
export interface QueueProcessorHooks {
  /** After a job of the processor's queue completed (its job is gone from the queue by then). */
  jobCompleted?(job: unknown, result: unknown): void;
  /** After a job failed (Bull's `failed` event). */
  jobFailed?(job: unknown, err: Error): void;
  /**
   * At shutdown, once the queue takes no new jobs: ends the running jobs. Without it, shutdown
   * waits for the running jobs to finish.
   */
  drain?(): Promise<void>;
}
