import { Inject, Injectable, Logger } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { PeriodicTask, PeriodicWorker } from '../../../common/periodic-task';
import { APP_CONFIG, AppConfig } from '../../../config/app-config';
import { DeliveryEvaluationQueue } from '../delivery-evaluation.queue';

const BATCH = 500;

/**
 * Worker role, safe in every replica:
 * - sweep: an accepted delivery still unevaluated after the grace period (its job was lost to a
 *   Redis outage or a crash) is enqueued again;
 * - housekeeping: log entries older than the retention are deleted, except each webhook's newest
 *   `logKeepLatest`; the dedup memory (accepted entries) goes with them, never sooner.
 */
@Injectable()
export class DeliverySweeper extends PeriodicWorker {
  private readonly logger = new Logger('DeliverySweeper');
  protected readonly tasks: PeriodicTask[];

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly evaluations: DeliveryEvaluationQueue,
    registry: SchedulerRegistry,
  ) {
    super();
    const { sweepIntervalMs, housekeepingIntervalMs } = config.webhooks;
    const common = { logger: this.logger, registry };
    this.tasks = [
      new PeriodicTask({
        ...common,
        name: 'webhooks.sweep',
        intervalMs: sweepIntervalMs,
        work: () => this.sweep(),
      }),
      new PeriodicTask({
        ...common,
        name: 'webhooks.housekeeping',
        intervalMs: housekeepingIntervalMs,
        work: () => this.housekeeping(),
      }),
    ];
  }

  /** Returns how many deliveries it enqueued again. */
  async sweep(): Promise<number> {
    const due = new Date(Date.now() - this.config.webhooks.sweepGraceMs);
    const rows = (await this.dataSource.query(
      `SELECT id FROM webhook_deliveries WHERE evaluation_due_at < ? ORDER BY evaluation_due_at LIMIT ${BATCH}`,
      [due],
    )) as { id: string }[];
    for (const row of rows) await this.evaluations.enqueue(String(row.id));
    return rows.length;
  }

  /** Returns how many log entries it deleted. */
  async housekeeping(): Promise<number> {
    const { logRetentionDays, logKeepLatest, housekeepingBatch } = this.config.webhooks;
    const cutoff = new Date(Date.now() - logRetentionDays * 86_400_000);
    let deleted = 0;
    // Only webhooks that have something to delete: their oldest expired, evaluated entry lies
    // below the boundary (their `logKeepLatest`-th newest entry, read from (webhook_id, id)).
    // Webhooks whose expired entries are all among their newest must not come back every pass,
    // or past one batch of them the others would never be reached. A boundary read here and
    // used below can only be older than the current one, which keeps more, never fewer.
    const stale = (await this.dataSource.query(
      `SELECT s.webhook_id, s.boundary FROM (
         SELECT o.webhook_id, o.oldest,
                (SELECT b.id FROM webhook_deliveries b WHERE b.webhook_id = o.webhook_id
                  ORDER BY b.id DESC LIMIT 1 OFFSET ?) AS boundary
           FROM (SELECT webhook_id, MIN(id) AS oldest FROM webhook_deliveries
                  WHERE received_at < ? AND evaluation_due_at IS NULL GROUP BY webhook_id) o
       ) s
       WHERE s.oldest < s.boundary
       ORDER BY s.oldest LIMIT ?`,
      [logKeepLatest - 1, cutoff, housekeepingBatch],
    )) as { webhook_id: string; boundary: string }[];
    for (const { webhook_id: webhookId, boundary } of stale) {
      const result = (await this.dataSource.query(
        `DELETE FROM webhook_deliveries
          WHERE webhook_id = ? AND id < ? AND received_at < ? AND evaluation_due_at IS NULL`,
        [webhookId, boundary, cutoff],
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
  }
}
