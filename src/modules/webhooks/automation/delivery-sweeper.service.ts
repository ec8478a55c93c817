import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnModuleDestroy,
} from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../../../config/app-config';
import { DeliveryEvaluationQueue } from '../delivery-evaluation.queue';

const SWEEP_TIMER = 'webhooks.sweep';
const HOUSEKEEPING_TIMER = 'webhooks.housekeeping';
const BATCH = 500;

/**
 * Worker role, safe in every replica:
 * - sweep: an accepted delivery still unevaluated after the grace period (its job was lost to a
 *   Redis outage or a crash) is enqueued again;
 * - housekeeping: log entries older than the retention are deleted, except each webhook's newest
 *   `logKeepLatest`; the dedup memory (accepted entries) goes with them, never sooner.
 */
@Injectable()
export class DeliverySweeper implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('DeliverySweeper');
  private sweeping = false;
  private cleaning = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly evaluations: DeliveryEvaluationQueue,
    private readonly scheduler: SchedulerRegistry,
  ) {}

  onApplicationBootstrap(): void {
    const { sweepIntervalMs, housekeepingIntervalMs } = this.config.webhooks;
    this.scheduler.addInterval(
      SWEEP_TIMER,
      setInterval(() => void this.sweep(), sweepIntervalMs),
    );
    this.scheduler.addInterval(
      HOUSEKEEPING_TIMER,
      setInterval(() => void this.housekeeping(), housekeepingIntervalMs),
    );
  }

  onModuleDestroy(): void {
    for (const timer of [SWEEP_TIMER, HOUSEKEEPING_TIMER]) {
      if (this.scheduler.doesExist('interval', timer)) this.scheduler.deleteInterval(timer);
    }
  }

  async sweep(): Promise<number> {
    if (this.sweeping) return 0;
    this.sweeping = true;
    try {
      const due = new Date(Date.now() - this.config.webhooks.sweepGraceMs);
      const rows = (await this.dataSource.query(
        `SELECT id FROM webhook_deliveries WHERE evaluation_due_at < ? ORDER BY evaluation_due_at LIMIT ${BATCH}`,
        [due],
      )) as { id: string }[];
      for (const row of rows) await this.evaluations.enqueue(String(row.id));
      return rows.length;
    } catch (err) {
      this.logger.warn(`sweep failed: ${(err as Error).message}`);
      return 0;
    } finally {
      this.sweeping = false;
    }
  }

  async housekeeping(): Promise<number> {
    if (this.cleaning) return 0;
    this.cleaning = true;
    try {
      const { logRetentionDays, logKeepLatest } = this.config.webhooks;
      const cutoff = new Date(Date.now() - logRetentionDays * 86_400_000);
      let deleted = 0;
      const stale = (await this.dataSource.query(
        `SELECT DISTINCT webhook_id FROM webhook_deliveries WHERE received_at < ? LIMIT 1000`,
        [cutoff],
      )) as { webhook_id: string }[];
      for (const { webhook_id: webhookId } of stale) {
        const [boundary] = (await this.dataSource.query(
          `SELECT id FROM webhook_deliveries WHERE webhook_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?`,
          [webhookId, logKeepLatest - 1],
        )) as { id: string }[];
        if (!boundary) continue;
        const result = (await this.dataSource.query(
          `DELETE FROM webhook_deliveries
            WHERE webhook_id = ? AND id < ? AND received_at < ? AND evaluation_due_at IS NULL`,
          [webhookId, boundary.id, cutoff],
        )) as { affectedRows: number };
        deleted += result.affectedRows;
      }
      // A webhook deleted longer ago than the retention keeps nothing, not even its newest entries.
      const gone = (await this.dataSource.query(
        `DELETE d FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
          WHERE w.deleted_at < ? AND d.evaluation_due_at IS NULL`,
        [cutoff],
      )) as { affectedRows: number };
      return deleted + gone.affectedRows;
    } catch (err) {
      this.logger.warn(`housekeeping failed: ${(err as Error).message}`);
      return 0;
    } finally {
      this.cleaning = false;
    }
  }
}
