import { DynamicModule, Module } from '@nestjs/common';
import type { Role } from '../../config/app-config';
import { FactoriesModule } from '../factories/factories.module';
import { SecretsModule } from '../secrets/secrets.module';
import { DeliveryEvaluator } from './automation/delivery-evaluator.service';
import { DeliverySweeper } from './automation/delivery-sweeper.service';
import { DeliveryWorker } from './automation/delivery-worker.service';
import { DeliveriesController } from './management/deliveries.controller';
import { WebhookManagement } from './management/webhook-management.service';
import { WebhooksController } from './management/webhooks.controller';
import { WebhooksModule } from './webhooks.module';

/**
 * Webhook management and the delivery log on the API role; on the worker role, the evaluation
 * of accepted deliveries (automations → runs), its sweeper and the log's housekeeping.
 */
@Module({})
export class WebhookFeaturesModule {
  /** `runs` is the application's RunsModule (it creates the runs automations start). */
  static forRoles(roles: readonly Role[], runs: DynamicModule): DynamicModule {
    const worker = roles.includes('worker');
    return {
      module: WebhookFeaturesModule,
      imports: [WebhooksModule, FactoriesModule, SecretsModule, runs],
      controllers: roles.includes('api') ? [WebhooksController, DeliveriesController] : [],
      providers: [
        WebhookManagement,
        // The worker's `@QueueProcessor` registers only with the worker role.
        DeliveryEvaluator,
        DeliveryWorker,
        ...(worker ? [DeliverySweeper] : []),
      ],
    };
  }
}
