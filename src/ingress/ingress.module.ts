import { DynamicModule, Module } from '@nestjs/common';
import { infrastructureImports } from '../bootstrap/infrastructure';
import { AppConfig } from '../config/app-config';
import type { AmbientExtension } from '../extensions/extension.types';
import { AuditModule } from '../modules/audit/audit.module';
import { HealthChecksModule } from '../modules/health/health-checks.module';
import { AmbientMetrics } from '../modules/metrics/ambient-metrics';
import { SecretsModule } from '../modules/secrets/secrets.module';
import { WebhooksModule } from '../modules/webhooks/webhooks.module';
import { AcceptedDeliveryWriter } from './accepted-delivery-writer';
import { IngressController } from './ingress.controller';
import { IngressHealthController } from './ingress-health.controller';
import { IngressService } from './ingress.service';
import { IngressRateLimiter } from './rate-limiter';
import { WebhookLookup } from './webhook-lookup';

/**
 * The webhook ingress: its own Nest application (role `ingress`), with its own MySQL pool and
 * Redis connections, so a flood of deliveries never queues behind API requests.
 */
@Module({})
export class IngressModule {
  static forConfig(
    config: AppConfig,
    metrics: AmbientMetrics,
    extensions: readonly AmbientExtension[] = [],
  ): DynamicModule {
    return {
      module: IngressModule,
      imports: [
        ...infrastructureImports(config, metrics, null, extensions),
        // Team secrets record their changes (never made from the ingress, but the writer is theirs).
        AuditModule,
        SecretsModule,
        WebhooksModule,
        HealthChecksModule.forRoles(['ingress']),
      ],
      controllers: [IngressController, IngressHealthController],
      providers: [IngressService, IngressRateLimiter, WebhookLookup, AcceptedDeliveryWriter],
    };
  }
}
