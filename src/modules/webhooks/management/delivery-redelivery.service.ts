import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { Principal } from '../../../common/auth/principal';
import { ApiError } from '../../../common/errors/api-error';
import { AuditLog } from '../../audit';
import { DeliveryEvaluationQueue } from '../delivery-evaluation.queue';
import { DeliveryLog } from '../delivery-log.repository';
import { STATUS_LABELS, WebhookDelivery } from '../entities/webhook-delivery.entity';
import { WebhookManagement } from './webhook-management.service';

/**
 * Redelivery: a stored (accepted) delivery's payload evaluated again against the automations as
 * they are now, as a new log entry linked to the original, so it starts runs again where the
 * sender's own re-send would be a duplicate.
 */
@Injectable()
export class DeliveryRedelivery {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly webhooks: WebhookManagement,
    private readonly log: DeliveryLog,
    private readonly evaluations: DeliveryEvaluationQueue,
    private readonly audit: AuditLog,
  ) {}

  async redeliver(
    principal: Principal,
    factoryUid: string,
    webhookUid: string,
    entryId: string,
  ): Promise<WebhookDelivery> {
    const { factory, webhook } = await this.webhooks.get(principal, factoryUid, webhookUid);
    const original = /^\d{1,19}$/.test(entryId) ? await this.log.get(webhook.id, entryId) : null;
    if (!original) throw ApiError.notFound(`delivery "${entryId}"`);
    const { payload } = original;
    if (!payload) {
      throw new ApiError(
        'conflict',
        `delivery ${entryId} is ${STATUS_LABELS[original.status]}: only Accepted deliveries keep a payload to redeliver`,
        { retryable: false },
      );
    }
    if (!webhook.enabled) {
      throw new ApiError(
        'conflict',
        `webhook "${webhook.name}" is disabled and accepts no deliveries: enable it to redeliver`,
        { retryable: false },
      );
    }
    const entry = await this.dataSource.transaction(async (manager) => {
      const created = await this.log.recordRedelivery(
        manager,
        { ...original, payload },
        new Date(),
      );
      await this.audit.record(
        manager,
        principal,
        'webhook.redeliver',
        { type: 'webhook', id: webhook.id },
        {
          factory_id: factory.id,
          delivery: original.id,
          redelivery: created.id,
          delivery_id: created.deliveryId,
        },
      );
      return created;
    });
    // Not enqueued (Redis away): the entry stays due and the worker's sweeper evaluates it.
    await this.evaluations.enqueue(entry.id);
    return entry;
  }
}
