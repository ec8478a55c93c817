import { InjectQueue } from '@nestjs/bull';
import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import Bull, { Queue } from 'bull';
import { bullQueueOptions } from '../../../common/redis/bull-options';
import { APP_CONFIG, AppConfig } from '../../../config/app-config';

/** BullModule's name (injection token) of this process's own volume's debug-agent queue. */
export const DEBUG_AGENTS_QUEUE = 'debug-agents';
export const DEBUG_JOB = 'debug';

export interface DebugJobData {
  runId: string;
}

/** The Bull name of a volume's queue. */
export function debugQueueName(volume: string): string {
  return `${DEBUG_AGENTS_QUEUE}:${volume}`;
}

/**
 * One Bull queue of debug-agent jobs per workspace volume (`debug-agents:<volume>`): a debug
 * agent must run where the failed workspace was kept, so only the workers of that volume
 * consume its queue. The local volume's queue is BullModule's (its processor is declared with
 * `@QueueProcessor`); another volume's is opened, to add jobs only, on first use and closed at
 * shutdown.
 */
@Injectable()
export class DebugAgentQueues implements OnApplicationShutdown {
  private readonly others = new Map<string, Queue<DebugJobData>>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectQueue(DEBUG_AGENTS_QUEUE) private readonly own: Queue<DebugJobData>,
  ) {}

  /** The queue of this process's own volume. */
  local(): Queue<DebugJobData> {
    return this.own;
  }

  forVolume(volume: string): Queue<DebugJobData> {
    if (volume === this.config.runs.workspaceVolume) return this.own;
    let queue = this.others.get(volume);
    if (!queue) {
      const options = bullQueueOptions(this.config);
      queue = new Bull<DebugJobData>(debugQueueName(volume), options.url, options);
      this.others.set(volume, queue);
    }
    return queue;
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all([...this.others.values()].map((queue) => queue.close()));
    this.others.clear();
  }
}
