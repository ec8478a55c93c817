import { Module } from '@nestjs/common';
import { AuditModule } from '../modules/audit/audit.module';
import { HealthChecksModule } from '../modules/health/health-checks.module';
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
 * Redis connections (the infrastructure bootstrap puts beneath it), so a flood of deliveries never
 * queues behind API requests.
 */
@Module({
  imports: [
    // Team secrets record their changes (never made from the ingress, but the writer is theirs).
    AuditModule,
    SecretsModule,
    WebhooksModule,
    HealthChecksModule.forRoles(['ingress']),
  ],
  controllers: [IngressController, IngressHealthController],
  providers: [IngressService, IngressRateLimiter, WebhookLookup, AcceptedDeliveryWriter],
})
export class IngressModule {}
