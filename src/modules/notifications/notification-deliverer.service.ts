import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Job } from 'bull';
import { EgressGuard } from '../../common/egress/egress-guard';
import { QueueProcessor } from '../../common/queues/queue-processor.decorator';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { SecretCipher } from '../secrets';
import { retryDelayMs } from './backoff';
import { NotificationDelivery } from './entities/notification-delivery.entity';
import { NotificationDeliveryRepository } from './notification-delivery.repository';
import { NotificationEndpointRepository } from './notification-endpoint.repository';
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
    private readonly deliveries: NotificationDeliveryRepository,
    private readonly endpoints: NotificationEndpointRepository,
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
    const claimed = await this.deliveries.claimAttempt(
      deliveryId,
      new Date(now.getTime() + EARLY_TOLERANCE_MS),
      new Date(now.getTime() + this.config.notifications.timeoutMs),
    );
    if (!claimed) return 'skipped';
    // Deleting the endpoint deletes its deliveries: either row gone means nothing to send.
    const delivery = await this.deliveries.find(deliveryId);
    const endpoint = delivery ? await this.endpoints.find(delivery.endpointId) : null;
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
    const settled = await this.deliveries.settleAttempt(delivery.id, delivery.attempts, {
      status,
      attempts,
      responseCode: outcome.responseCode,
      lastError: outcome.error?.slice(0, 1024) ?? null,
      nextAttemptAt,
      lastAttemptAt: finishedAt,
    });
    if (!settled) return 'skipped';
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
