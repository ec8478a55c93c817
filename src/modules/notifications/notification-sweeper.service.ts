import { Inject, Injectable, Logger } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { PeriodicTask, PeriodicWorker } from '../../common/periodic-task';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { NotificationQueue } from './notification-queue';

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
    @InjectDataSource() private readonly dataSource: DataSource,
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
    const rows = (await this.dataSource.query(
      `SELECT id, next_attempt_at FROM notification_deliveries
        WHERE next_attempt_at < ? AND status = 'pending' ORDER BY next_attempt_at LIMIT ${BATCH}`,
      [overdue],
    )) as { id: string; next_attempt_at: Date }[];
    for (const row of rows) {
      await this.queue.enqueue({ deliveryId: String(row.id), nextAttemptAt: row.next_attempt_at });
    }
    return rows.length;
  }

  /** Returns how many finished deliveries it deleted. */
  async housekeeping(): Promise<number> {
    const cutoff = new Date(Date.now() - this.config.notifications.logRetentionDays * 86_400_000);
    let deleted = 0;
    for (;;) {
      const result = (await this.dataSource.query(
        `DELETE FROM notification_deliveries
          WHERE created_at < ? AND next_attempt_at IS NULL AND status <> 'pending'
          LIMIT ${DELETE_BATCH}`,
        [cutoff],
      )) as { affectedRows: number };
      deleted += result.affectedRows;
      if (result.affectedRows < DELETE_BATCH) return deleted;
    }
  }
}
