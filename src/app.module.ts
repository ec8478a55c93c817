import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR, DiscoveryModule } from '@nestjs/core';
import { ScheduleModule } from '@nestjs/schedule';
import { ProblemFilter } from './common/errors/problem.filter';
import { AMBIENT_CONSUMED_QUEUES } from './bootstrap/consumed-queues';
import { infrastructureImports } from './bootstrap/infrastructure';
import { CONSUMED_QUEUES } from './common/queues/consumed-queues';
import { QueueProcessorExplorer } from './common/queues/queue-processor.explorer';
import { AppConfig } from './config/app-config';
import type { AmbientExtension } from './extensions/extension.types';
import { AmbientMetrics } from './modules/metrics/ambient-metrics';
import { ArtifactsApiModule, ArtifactsModule } from './modules/artifacts/artifacts.module';
import { AuditApiModule, AuditModule } from './modules/audit/audit.module';
import { BlobsModule } from './modules/blobs/blobs.module';
import { ConsoleModule } from './modules/console/console.module';
import { ConversationsModule } from './modules/conversations/conversations.module';
import {
  EnvironmentFeaturesModule,
  EnvironmentsModule,
} from './modules/environments/environments.module';
import { FactoriesApiModule, FactoriesWorkerModule } from './modules/factories/factories.module';
import { HealthChecksModule } from './modules/health/health-checks.module';
import { HealthModule } from './modules/health/health.module';
import { IdempotencyInterceptor } from './modules/idempotency/idempotency.interceptor';
import { IdempotencyModule } from './modules/idempotency/idempotency.module';
import { IdempotencySweeper } from './modules/idempotency/idempotency.sweeper';
import { ModelsModule } from './modules/models/models.module';
import { RunsModule } from './modules/runs/runs.module';
import { SandboxModule } from './modules/sandbox/sandbox.module';
import { SecretsApiModule } from './modules/secrets/secrets.module';
import { SkillsApiModule, SkillsModule } from './modules/skills/skills.module';
import { SchedulesModule } from './modules/schedules/schedules.module';
import { ScoresModule } from './modules/scores/scores.module';
import { BearerAuthGuard } from './modules/teams/bearer-auth.guard';
import { TeamsModule } from './modules/teams/teams.module';
import { WebhookFeaturesModule } from './modules/webhooks/webhook-features.module';
import { WorkersModule } from './modules/workers/workers.module';

/** The root module; which controllers and processors it wires depends on the roles configured. */
@Module({})
export class AppModule {
  /** `metrics`: the process's series (shared with its ingress application); new when omitted. */
  static forConfig(
    config: AppConfig,
    metrics = new AmbientMetrics(),
    extensions: readonly AmbientExtension[] = [],
  ): DynamicModule {
    const api = config.roles.includes('api');
    const runs = RunsModule.forRoles(config.roles);
    return {
      module: AppModule,
      imports: [
        ...infrastructureImports(config, metrics, true, extensions),
        ScheduleModule.forRoot(),
        DiscoveryModule,
        TeamsModule,
        AuditModule,
        IdempotencyModule,
        ModelsModule,
        SandboxModule,
        BlobsModule.forRoles(api),
        ArtifactsModule,
        EnvironmentsModule,
        SkillsModule,
        runs,
        ...(api ? [ConversationsModule, ArtifactsApiModule, ScoresModule.forRuns(runs)] : []),
        SchedulesModule.forRoles(config.roles, runs),
        WorkersModule.forRoles(config.roles, runs),
        // The ingress role's readiness is the ingress application's own (src/ingress).
        HealthChecksModule.forRoles(config.roles.filter((role) => role !== 'ingress')),
        ...(api ? [HealthModule, ConsoleModule, AuditApiModule] : []),
        ...(api ? [SecretsApiModule, FactoriesApiModule] : []),
        EnvironmentFeaturesModule.forRoles(config.roles, runs),
        ...(api ? [SkillsApiModule] : []),
        ...(config.roles.includes('worker') ? [FactoriesWorkerModule] : []),
        WebhookFeaturesModule.forRoles(config.roles, runs),
      ],
      providers: [
        // In the root module: its shutdown (pause the queues, drain the processors) runs first.
        { provide: CONSUMED_QUEUES, useValue: AMBIENT_CONSUMED_QUEUES },
        QueueProcessorExplorer,
        ...(api
          ? [
              { provide: APP_GUARD, useClass: BearerAuthGuard },
              { provide: APP_FILTER, useClass: ProblemFilter },
              { provide: APP_INTERCEPTOR, useClass: IdempotencyInterceptor },
              IdempotencySweeper,
            ]
          : []),
      ],
    };
  }
}
