import { Injectable, Logger } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { PeriodicSweeper } from '../../common/periodic-task';
import { IdempotencyStore } from './idempotency.repository';

/** How often expired keys are deleted (a lookup already ignores an expired key). */
const SWEEP_INTERVAL_MS = 10 * 60_000;

/** Deletes `Idempotency-Key`s past AMBIENT_IDEMPOTENCY_TTL_HOURS (api role; safe in every replica). */
@Injectable()
export class IdempotencySweeper extends PeriodicSweeper {
  constructor(
    private readonly store: IdempotencyStore,
    registry: SchedulerRegistry,
  ) {
    super({
      name: 'idempotency key sweep',
      intervalMs: SWEEP_INTERVAL_MS,
      logger: new Logger('Idempotency'),
      registry,
      swept: (deleted) => `${deleted} expired idempotency key(s) deleted`,
    });
  }

  sweep(): Promise<number> {
    return this.store.sweep();
  }
}
