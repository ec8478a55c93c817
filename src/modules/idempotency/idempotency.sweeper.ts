import { Injectable, Logger } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { PeriodicTask, PeriodicWorker } from '../../common/periodic-task';
import { IdempotencyStore } from './idempotency.store';

/** How often expired keys are deleted (a lookup already ignores an expired key). */
const SWEEP_INTERVAL_MS = 10 * 60_000;

/** Deletes `Idempotency-Key`s past AMBIENT_IDEMPOTENCY_TTL_HOURS (api role; safe in every replica). */
@Injectable()
export class IdempotencySweeper extends PeriodicWorker {
  private readonly logger = new Logger('Idempotency');
  protected readonly tasks: PeriodicTask[];
  private readonly task: PeriodicTask;

  constructor(
    private readonly store: IdempotencyStore,
    registry: SchedulerRegistry,
  ) {
    super();
    this.task = new PeriodicTask({
      name: 'idempotency key sweep',
      intervalMs: SWEEP_INTERVAL_MS,
      logger: this.logger,
      registry,
      runAtStart: true,
      work: async () => {
        const deleted = await this.store.sweep();
        if (deleted) this.logger.log(`${deleted} expired idempotency key(s) deleted`);
      },
    });
    this.tasks = [this.task];
  }

  /** Sweeps now (or joins the sweep in progress). */
  sweepNow(): Promise<void> {
    return this.task.runNow();
  }
}
