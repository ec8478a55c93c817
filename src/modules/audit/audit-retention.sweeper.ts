import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { SchedulerRegistry } from '@nestjs/schedule';
import { DataSource } from 'typeorm';
import { PeriodicTask, PeriodicWorker } from '../../common/periodic-task';
import { APP_CONFIG, AppConfig } from '../../config/app-config';

const SWEEP_INTERVAL_MS = 60 * 60_000;
/** Rows one DELETE removes, so a sweep never holds long locks; it repeats while batches are full. */
const SWEEP_BATCH = 1000;
const SWEEP_ROUNDS = 100;
const DAY_MS = 24 * 60 * 60_000;

/** Deletes audit events older than AMBIENT_AUDIT_RETENTION_DAYS (api role; safe in every replica). */
@Injectable()
export class AuditRetentionSweeper extends PeriodicWorker {
  private readonly logger = new Logger('Audit');
  protected readonly tasks: PeriodicTask[];
  private readonly task: PeriodicTask;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    registry: SchedulerRegistry,
  ) {
    super();
    this.task = new PeriodicTask({
      name: 'audit retention sweep',
      intervalMs: SWEEP_INTERVAL_MS,
      logger: this.logger,
      registry,
      runAtStart: true,
      work: async () => {
        const deleted = await this.sweep();
        if (deleted) this.logger.log(`${deleted} audit event(s) past retention deleted`);
      },
    });
    this.tasks = [this.task];
  }

  /** Sweeps now (or joins the sweep in progress). */
  sweepNow(): Promise<void> {
    return this.task.runNow();
  }

  /** Deletes the events older than the retention, in bounded batches; returns how many. */
  async sweep(now = new Date()): Promise<number> {
    const cutoff = new Date(now.getTime() - this.config.audit.retentionDays * DAY_MS);
    let deleted = 0;
    for (let round = 0; round < SWEEP_ROUNDS; round += 1) {
      const result = (await this.dataSource.query(
        `DELETE FROM audit_events WHERE occurred_at < ? ORDER BY occurred_at LIMIT ${SWEEP_BATCH}`,
        [cutoff],
      )) as { affectedRows: number };
      deleted += result.affectedRows;
      if (result.affectedRows < SWEEP_BATCH) break;
    }
    return deleted;
  }
}
