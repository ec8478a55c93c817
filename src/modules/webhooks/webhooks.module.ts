import { BullModule } from '@nestjs/bull';
import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DeliveryEvaluationQueue, DELIVERIES_QUEUE } from './delivery-evaluation.queue';
import { DeliveryLog } from './delivery-log.repository';
import { SignatureVerifiersModule } from './verifiers/signature-verifiers.module';
import { Webhook } from './entities/webhook.entity';
import { WebhookDelivery } from './entities/webhook-delivery.entity';
import { WebhookDeliveryKey } from './entities/webhook-delivery-key.entity';
import { WebhookDeliveryRun } from './entities/webhook-delivery-run.entity';
import { WebhookStore } from './webhook-store.repository';

/** Webhook rows, the delivery log and the evaluation queue: shared by the ingress and the API. */
@Module({
  imports: [
    TypeOrmModule.forFeature([Webhook, WebhookDelivery, WebhookDeliveryKey, WebhookDeliveryRun]),
    BullModule.registerQueue({ name: DELIVERIES_QUEUE }),
    SignatureVerifiersModule,
  ],
  providers: [WebhookStore, DeliveryLog, DeliveryEvaluationQueue],
  exports: [WebhookStore, DeliveryLog, DeliveryEvaluationQueue],
})
export class WebhooksModule {}
