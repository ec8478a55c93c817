import { Inject, Injectable, Logger } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { PeriodicTask, PeriodicWorker } from '../../../common/periodic-task';
import { APP_CONFIG, AppConfig } from '../../../config/app-config';
import { DeliveryEvaluationQueue } from '../delivery-evaluation.queue';
import { DeliveryLog } from '../delivery-log.repository';

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
    private readonly log: DeliveryLog,
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
    const ids = await this.log.dueBefore(due, BATCH);
    for (const id of ids) await this.evaluations.enqueue(id);
    return ids.length;
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
    const stale = await this.log.webhooksWithExpired(logKeepLatest, cutoff, housekeepingBatch);
    for (const { webhookId, boundary } of stale) {
      deleted += await this.log.deleteExpired(webhookId, boundary, cutoff);
    }
    // A webhook deleted longer ago than the retention keeps nothing, not even its newest entries.
    return deleted + (await this.log.deleteOfWebhooksDeletedBefore(cutoff));
  }
}
