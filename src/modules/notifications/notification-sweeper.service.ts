import { Inject, Injectable, Logger } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { PeriodicTask, PeriodicWorker } from '../../common/periodic-task';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { NotificationQueue } from './notification-queue';
import { NotificationDeliveryRepository } from './notification-delivery.repository';

const BATCH = 500;
const HOUSEKEEPING_INTERVAL_MS = 10 * 60_000;
const DELETE_BATCH = 1000;

/**
 * Worker role, safe in every replica:
 * - sweep: a delivery still due a grace period after its due time (its job was lost to a Redis
 *   outage or a crash, or its worker died mid-attempt) is queued again;
 * - housekeeping: finished deliveries older than the log's retention are deleted.
 */
@Injectable()
export class NotificationSweeper extends PeriodicWorker {
  private readonly logger = new Logger('NotificationSweeper');
  protected readonly tasks: PeriodicTask[];

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly deliveries: NotificationDeliveryRepository,
    private readonly queue: NotificationQueue,
    registry: SchedulerRegistry,
  ) {
    super();
    const common = { logger: this.logger, registry };
    this.tasks = [
      new PeriodicTask({
        ...common,
        name: 'notifications.sweep',
        intervalMs: config.notifications.sweepIntervalMs,
        work: () => this.sweep(),
      }),
      new PeriodicTask({
        ...common,
        name: 'notifications.housekeeping',
        intervalMs: HOUSEKEEPING_INTERVAL_MS,
        work: () => this.housekeeping(),
      }),
    ];
  }

  /** Returns how many deliveries it queued again. */
  async sweep(): Promise<number> {
    const overdue = new Date(Date.now() - this.config.notifications.sweepGraceMs);
    const rows = await this.deliveries.overdue(overdue, BATCH);
    for (const row of rows) {
      await this.queue.enqueue({ deliveryId: row.id, nextAttemptAt: row.nextAttemptAt });
    }
    return rows.length;
  }

  /** Returns how many finished deliveries it deleted. */
  async housekeeping(): Promise<number> {
    const cutoff = new Date(Date.now() - this.config.notifications.logRetentionDays * 86_400_000);
    let deleted = 0;
    for (;;) {
      const affected = await this.deliveries.deleteFinishedBefore(cutoff, DELETE_BATCH);
      deleted += affected;
      if (affected < DELETE_BATCH) return deleted;
    }
  }
}
