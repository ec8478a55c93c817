import { Module } from '@nestjs/common';
import { FactoriesModule } from './factories/factories.module';
import { RunsModule } from '../runs';
import { SecretsModule } from '../secrets';
import { DeliveryEvaluator } from './automation/delivery-evaluator.service';
import { DeliverySweeper } from './automation/delivery-sweeper.service';
import { DeliveryWorker } from './automation/delivery-worker.service';
import { DeliveriesController } from './management/deliveries.controller';
import { DeliveryRedelivery } from './management/delivery-redelivery.service';
import { WebhookManagement } from './management/webhook-management.service';
import { WebhooksController } from './management/webhooks.controller';
import { WebhooksModule } from './webhooks.module';

/**
 * Webhook management and the evaluation of accepted deliveries (automations → runs), for every
 * role; the evaluation's `@QueueProcessor` registers only with the worker role.
 */
@Module({
  imports: [WebhooksModule, FactoriesModule, SecretsModule, RunsModule],
  providers: [WebhookManagement, DeliveryEvaluator, DeliveryWorker],
  exports: [WebhookManagement, DeliveryEvaluator],
})
export class WebhookAutomationModule {}

/** Webhook management and the delivery log on the API role. */
@Module({
  imports: [WebhookAutomationModule, WebhooksModule, FactoriesModule],
  controllers: [WebhooksController, DeliveriesController],
  providers: [DeliveryRedelivery],
})
export class WebhooksApiModule {}

/** The worker role's sweep of deliveries left unevaluated, and the log's housekeeping. */
@Module({
  imports: [WebhookAutomationModule, WebhooksModule],
  providers: [DeliverySweeper],
})
export class WebhooksWorkerModule {}
