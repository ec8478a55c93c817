import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Queue } from 'bull';
import type {
  DataSource,
  EntityManager,
  EntitySubscriberInterface,
  QueryRunner,
  TransactionCommitEvent,
  TransactionRollbackEvent,
} from 'typeorm';
import { enqueueWithin } from '../../common/queues/enqueue-within';

export const NOTIFICATIONS_QUEUE = 'notification-deliveries';
export const SEND_JOB = 'send';

export interface SendJobData {
  deliveryId: string;
}

/** A delivery's attempt that is due (now, or after `delayMs`). */
export interface DueAttempt {
  deliveryId: string;
  nextAttemptAt: Date;
}

/**
 * Hands due deliveries to the worker. A delivery written in a transaction is queued after its
 * commit (dropped on rollback), so the job never runs before its row is visible. Losing a job is
 * harmless: the row stays due and the sweeper queues it again. The job id names the attempt
 * (delivery and due time), so the sweeper's second add of a waiting job is a no-op.
 */
@Injectable()
export class NotificationQueue implements EntitySubscriberInterface {
  private readonly logger = new Logger('NotificationQueue');
  private readonly deferred = new WeakMap<QueryRunner, DueAttempt[]>();

  constructor(
    @InjectQueue(NOTIFICATIONS_QUEUE) readonly queue: Queue<SendJobData>,
    @InjectDataSource() dataSource: DataSource,
  ) {
    dataSource.subscribers.push(this);
  }

  /** Queues `attempts` once `manager`'s transaction commits (at once outside a transaction). */
  afterCommit(manager: EntityManager | undefined, attempts: DueAttempt[]): void {
    const runner = manager?.queryRunner;
    if (!runner?.isTransactionActive) {
      for (const attempt of attempts) void this.enqueue(attempt);
      return;
    }
    this.deferred.set(runner, [...(this.deferred.get(runner) ?? []), ...attempts]);
  }

  afterTransactionCommit(event: TransactionCommitEvent): void {
    if (event.queryRunner.isTransactionActive) return; // a savepoint: the outer commit decides
    const pending = this.deferred.get(event.queryRunner);
    this.deferred.delete(event.queryRunner);
    for (const attempt of pending ?? []) void this.enqueue(attempt);
  }

  afterTransactionRollback(event: TransactionRollbackEvent): void {
    if (!event.queryRunner.isTransactionActive) this.deferred.delete(event.queryRunner);
  }

  async enqueue({ deliveryId, nextAttemptAt }: DueAttempt): Promise<boolean> {
    const delay = Math.max(0, nextAttemptAt.getTime() - Date.now());
    const jobId = `n${deliveryId}-${nextAttemptAt.getTime()}`;
    const outcome = await enqueueWithin(
      this.queue.add(SEND_JOB, { deliveryId }, { jobId, delay }).then(() => undefined),
    );
    if (outcome.state !== 'done') {
      this.logger.warn(
        `enqueue of notification ${deliveryId} ${outcome.state}; the sweeper retries`,
      );
    }
    return outcome.state === 'done';
  }
}
