import { Inject, Injectable, Logger } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { PeriodicSweeper } from '../../common/periodic-task';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { AuditRetentionRepository } from './audit-retention.repository';

const SWEEP_INTERVAL_MS = 60 * 60_000;
/** Rows one DELETE removes, so a sweep never holds long locks; it repeats while batches are full. */
const SWEEP_BATCH = 1000;
const SWEEP_ROUNDS = 100;
const DAY_MS = 24 * 60 * 60_000;

/** Deletes audit events older than AMBIENT_AUDIT_RETENTION_DAYS (api role; safe in every replica). */
@Injectable()
export class AuditRetentionSweeper extends PeriodicSweeper {
  constructor(
    private readonly events: AuditRetentionRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    registry: SchedulerRegistry,
  ) {
    super({
      name: 'audit retention sweep',
      intervalMs: SWEEP_INTERVAL_MS,
      logger: new Logger('Audit'),
      registry,
      swept: (deleted) => `${deleted} audit event(s) past retention deleted`,
    });
  }

  /** Deletes the events older than the retention, in bounded batches; returns how many. */
  async sweep(now = new Date()): Promise<number> {
    const cutoff = new Date(now.getTime() - this.config.audit.retentionDays * DAY_MS);
    let deleted = 0;
    for (let round = 0; round < SWEEP_ROUNDS; round += 1) {
      const affected = await this.events.deleteOldest(cutoff, SWEEP_BATCH);
      deleted += affected;
      if (affected < SWEEP_BATCH) break;
    }
    return deleted;
  }
}
