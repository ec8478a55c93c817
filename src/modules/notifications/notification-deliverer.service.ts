import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Job } from 'bull';
import { DataSource } from 'typeorm';
import { EgressGuard } from '../../common/egress/egress-guard';
import { QueueProcessor } from '../../common/queues/queue-processor.decorator';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { SecretCipher } from '../secrets';
import { retryDelayMs } from './backoff';
import { NotificationDelivery } from './entities/notification-delivery.entity';
import { NotificationEndpoint } from './entities/notification-endpoint.entity';
import {
  NOTIFICATIONS_QUEUE,
  NotificationQueue,
  SEND_JOB,
  SendJobData,
} from './notification-queue';
import { AttemptOutcome, NotificationSender } from './notification-sender';

/** How early a job may run before its row's due time and still claim it (queue timer drift). */
const EARLY_TOLERANCE_MS = 1000;

/**
 * Worker role: makes a due delivery's attempt. The attempt is claimed first (its due time moved
 * past the attempt's timeout), so a second job of the same delivery does nothing and the sweeper
 * takes it up again only if this process died during the attempt. A failure schedules the next
 * attempt with exponential backoff until `maxAttempts`; then the delivery is failed.
 */
@Injectable()
export class NotificationDeliverer {
  private readonly logger = new Logger('Notifications');
  private readonly sender: NotificationSender;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly cipher: SecretCipher,
    private readonly queue: NotificationQueue,
  ) {
    this.sender = new NotificationSender(
      EgressGuard.fromSetting(config.egress.allow),
      config.notifications.timeoutMs,
    );
  }

  @QueueProcessor<SendJobData>(NOTIFICATIONS_QUEUE, {
    job: SEND_JOB,
    role: 'worker',
    concurrency: (config) => config.notifications.concurrency,
    attributes: (data) => ({ 'ambient.notification_delivery_id': data.deliveryId }),
  })
  async handle(job: Job<SendJobData>): Promise<string> {
    return this.attempt(job.data.deliveryId);
  }

  /** What became of the attempt: `sent`, `retry`, `failed`, or `skipped` (not due). */
  async attempt(deliveryId: string): Promise<string> {
    const now = new Date();
    const deliveries = this.dataSource.getRepository(NotificationDelivery);
    const claim = await deliveries
      .createQueryBuilder()
      .update()
      .set({ nextAttemptAt: new Date(now.getTime() + this.config.notifications.timeoutMs) })
      .where('id = :deliveryId AND status = :pending AND next_attempt_at <= :due', {
        deliveryId,
        pending: 'pending',
        due: new Date(now.getTime() + EARLY_TOLERANCE_MS),
      })
      .execute();
    if (!claim.affected) return 'skipped';
    // Deleting the endpoint deletes its deliveries: either row gone means nothing to send.
    const delivery = await deliveries.findOneBy({ id: deliveryId });
    const endpoint = delivery
      ? await this.dataSource
          .getRepository(NotificationEndpoint)
          .findOneBy({ id: delivery.endpointId })
      : null;
    if (!delivery || !endpoint) return 'skipped';
    if (!endpoint.enabled) {
      return this.settle(delivery, failure('the endpoint is disabled'), false);
    }
    let secret: string;
    try {
      secret = this.cipher.decrypt(endpoint.secretCiphertext, endpoint.teamId);
    } catch (err) {
      // A secrets key the server lost: retried like any failure, so the operator can restore it.
      return this.settle(delivery, failure(`signing secret: ${(err as Error).message}`), true);
    }
    const outcome = await this.sender.send({
      url: endpoint.url,
      format: endpoint.format,
      secret,
      messageId: delivery.messageId,
      payload: delivery.payload,
    });
    return this.settle(delivery, outcome, true);
  }

  private async settle(
    delivery: NotificationDelivery,
    outcome: AttemptOutcome,
    retryable: boolean,
  ): Promise<string> {
    const attempts = delivery.attempts + 1;
    const finishedAt = new Date();
    const delay =
      outcome.ok || !retryable ? null : retryDelayMs(this.config.notifications, attempts);
    const status = outcome.ok ? 'succeeded' : delay === null ? 'failed' : 'pending';
    const nextAttemptAt = delay === null ? null : new Date(finishedAt.getTime() + delay);
    // Guarded by the attempt count: a resend made meanwhile starts over and is not overwritten.
    const result = await this.dataSource
      .getRepository(NotificationDelivery)
      .createQueryBuilder()
      .update()
      .set({
        status,
        attempts,
        responseCode: outcome.responseCode,
        lastError: outcome.error?.slice(0, 1024) ?? null,
        nextAttemptAt,
        lastAttemptAt: finishedAt,
      })
      .where('id = :id AND status = :pending AND attempts = :before', {
        id: delivery.id,
        pending: 'pending',
        before: delivery.attempts,
      })
      .execute();
    if (!result.affected) return 'skipped';
    if (nextAttemptAt) await this.queue.enqueue({ deliveryId: delivery.id, nextAttemptAt });
    if (status === 'failed') {
      this.logger.warn(
        `notification ${delivery.id} (${delivery.event}) failed after ${attempts} attempts: ${outcome.error}`,
      );
    }
    return outcome.ok ? 'sent' : status === 'failed' ? 'failed' : 'retry';
  }
}

function failure(error: string): AttemptOutcome {
  return { ok: false, responseCode: null, error };
}
