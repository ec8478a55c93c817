import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, DiscoveryModule } from '@nestjs/core';
import { ScheduleModule } from '@nestjs/schedule';
import { ProblemFilter } from './common/errors/problem.filter';
import { AMBIENT_CONSUMED_QUEUES, PROBED_QUEUES } from './bootstrap/consumed-queues';
import { infrastructureImports } from './bootstrap/infrastructure';
import { CONSUMED_QUEUES } from './common/queues/consumed-queues';
import { QueueProcessorExplorer } from './common/queues/queue-processor.explorer';
import { AppConfig } from './config/app-config';
import { ExtensionSet } from './extensions/extension-set';
import { AmbientMetrics } from './modules/metrics/ambient-metrics';
import {
  ApprovalsApiModule,
  ApprovalsModule,
  ApprovalsWorkerModule,
} from './modules/approvals/approvals.module';
import { ArtifactsApiModule } from './modules/artifacts/artifacts-api.module';
import { ArtifactsModule } from './modules/artifacts/artifacts.module';
import { AuditApiModule, AuditModule } from './modules/audit/audit.module';
import { RetentionModule } from './modules/retention';
import { BlobsModule } from './modules/blobs/blobs.module';
import { ConsoleModule } from './modules/console/console.module';
import { ConversationsModule } from './modules/conversations/conversations.module';
import { EnvironmentsApiModule } from './modules/environments/environments-api.module';
import { EnvironmentsModule } from './modules/environments/environments.module';
import {
  WorkersModule,
  ExecutionWorkerModule,
  RemoteExecutionApiModule,
} from './modules/workers/workers.module';
import {
  FactoriesApiModule,
  FactoriesWorkerModule,
} from './modules/webhooks/factories/factories.module';
import { HealthChecksModule } from './modules/health/health-checks.module';
import { HealthModule } from './modules/health/health.module';
import { IdempotencyModule } from './modules/idempotency/idempotency.module';
import { SecretCipher } from './modules/secrets';
import { IdempotencySweeper } from './modules/idempotency/idempotency.sweeper';
import { LimitsApiModule, LimitsModule } from './modules/limits/limits.module';
import { ModelsModule } from './modules/models/models.module';
import {
  NotificationsApiModule,
  NotificationsModule,
  NotificationsWorkerModule,
} from './modules/notifications/notifications.module';
import { RunsApiModule, RunsModule } from './modules/runs/runs.module';
import { SecretsApiModule } from './modules/secrets/secrets.module';
import { SkillsApiModule } from './modules/skills/skills-api.module';
import { SkillsModule } from './modules/skills/skills.module';
import {
  SchedulerModule,
  SchedulesApiModule,
  SchedulesModule,
} from './modules/schedules/schedules.module';
import { ScoresModule } from './modules/scores/scores.module';
import { UsageApiModule } from './modules/usage/usage.module';
import { SignInApiModule } from './modules/sign-in/sign-in.module';
import { PermissionGuard } from './modules/teams/access/permission.guard';
import { RoutePermissionsCheck } from './modules/teams/access/route-permissions.check';
import { AuthenticationGuard } from './modules/teams/auth/authentication.guard';
import { TeamsApiModule } from './modules/teams/teams-api.module';
import { TeamsModule } from './modules/teams/teams.module';
import {
  WebhookAutomationModule,
  WebhooksApiModule,
  WebhooksWorkerModule,
} from './modules/webhooks/webhook-features.module';

/** The root module; which controllers and processors it wires depends on the roles configured. */
@Module({})
export class AppModule {
  /** `metrics`: the process's series (shared with its ingress application); new when omitted. */
  static forConfig(
    config: AppConfig,
    metrics = new AmbientMetrics(),
    extensions = ExtensionSet.of([]),
  ): DynamicModule {
    const api = config.roles.includes('api');
    const worker = config.roles.includes('worker');
    // Feature modules are static and shared by every role; the role modules add controllers
    // (api), sweepers (worker) and the scheduler loop on top of them.
    return {
      module: AppModule,
      imports: [
        ...infrastructureImports(config, {
          metrics,
          probedQueues: PROBED_QUEUES,
          extensions,
          servesHttp: api,
        }),
        ScheduleModule.forRoot(),
        DiscoveryModule,
        TeamsModule,
        AuditModule,
        IdempotencyModule.withCipher(SecretCipher),
        ModelsModule,
        LimitsModule,
        BlobsModule.forRoles(api),
        ArtifactsModule,
        EnvironmentsModule,
        SkillsModule,
        RunsModule,
        WorkersModule,
        SchedulesModule,
        WebhookAutomationModule,
        NotificationsModule,
        ApprovalsModule,
        // The ingress role's readiness is the ingress application's own (src/ingress).
        HealthChecksModule.forRoles(config.roles.filter((role) => role !== 'ingress')),
        ...(api
          ? [
              RunsApiModule,
              RemoteExecutionApiModule,
              ConversationsModule,
              ArtifactsApiModule.withRuns(RunsModule),
              ScoresModule,
              SchedulesApiModule,
              EnvironmentsApiModule.withRuns(RunsModule),
              WebhooksApiModule,
              SecretsApiModule,
              FactoriesApiModule,
              TeamsApiModule,
              SignInApiModule,
              SkillsApiModule.withRuns(RunsModule),
              HealthModule,
              ConsoleModule,
              AuditApiModule,
              RetentionModule,
              UsageApiModule,
              LimitsApiModule,
              NotificationsApiModule,
              ApprovalsApiModule,
            ]
          : []),
        ...(worker
          ? [
              ExecutionWorkerModule,
              FactoriesWorkerModule,
              WebhooksWorkerModule,
              NotificationsWorkerModule,
              ApprovalsWorkerModule,
            ]
          : []),
        ...(config.roles.includes('scheduler') ? [SchedulerModule] : []),
      ],
      providers: [
        // In the root module: its shutdown (pause the queues, drain the processors) runs first.
        { provide: CONSUMED_QUEUES, useValue: AMBIENT_CONSUMED_QUEUES },
        QueueProcessorExplorer,
        ...(api
          ? [
              // In this order: who is calling, then whether their role may.
              { provide: APP_GUARD, useClass: AuthenticationGuard },
              { provide: APP_GUARD, useClass: PermissionGuard },
              RoutePermissionsCheck,
              { provide: APP_FILTER, useClass: ProblemFilter },
              IdempotencySweeper,
            ]
          : []),
      ],
    };
  }
}
