import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import Bull, { Queue } from 'bull';
import { bullQueueOptions } from '../../common/redis/bull-options';
import { APP_CONFIG, AppConfig } from '../../config/app-config';

export const DEBUG_JOB = 'debug';

export interface DebugJobData {
  runId: string;
}

/**
 * One Bull queue of debug-agent jobs per workspace volume (`debug-agents:<volume>`): a debug
 * agent must run where the failed workspace was kept, so only the workers of that volume
 * consume its queue. Queues are opened on first use and closed at shutdown, after the debug
 * agent worker has stopped its agents (its onModuleDestroy).
 */
@Injectable()
export class DebugAgentQueues implements OnApplicationShutdown {
  private readonly queues = new Map<string, Queue<DebugJobData>>();

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  /** The queue of this process's own volume. */
  local(): Queue<DebugJobData> {
    return this.forVolume(this.config.runs.workspaceVolume);
  }

  forVolume(volume: string): Queue<DebugJobData> {
    let queue = this.queues.get(volume);
    if (!queue) {
      const options = bullQueueOptions(this.config);
      queue = new Bull<DebugJobData>(`debug-agents:${volume}`, options.url, options);
      this.queues.set(volume, queue);
    }
    return queue;
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all([...this.queues.values()].map((queue) => queue.close()));
    this.queues.clear();
  }
}
