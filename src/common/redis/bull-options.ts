import type { QueueOptions } from 'bull';
import type { AppConfig } from '../../config/app-config';

/** How every Bull queue of Ambient is set up, whether Nest registers it or a service creates it. */
export function bullQueueOptions(config: AppConfig): QueueOptions & { url: string } {
  return {
    url: config.redis.url,
    prefix: config.redis.prefix,
    defaultJobOptions: { removeOnComplete: true, removeOnFail: true, attempts: 1 },
    // Only processors use these: a worker's job lock lapses together with its run lease.
    settings: {
      lockDuration: config.runs.leaseMs,
      stalledInterval: config.runs.leaseMs,
      maxStalledCount: 1,
    },
  };
}
