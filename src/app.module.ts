import { BullModule } from '@nestjs/bull';
import { DynamicModule, Global, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { ScheduleModule } from '@nestjs/schedule';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ProblemFilter } from './common/errors/problem.filter';
import { RedisModule } from './common/redis/redis.module';
import { APP_CONFIG, AppConfig } from './config/app-config';
import { dataSourceOptions } from './database/database-setup';
import { ArtifactsApiModule, ArtifactsModule } from './modules/artifacts/artifacts.module';
import { BlobsModule } from './modules/blobs/blobs.module';
import { ConversationsModule } from './modules/conversations/conversations.module';
import {
  EnvironmentFeaturesModule,
  EnvironmentsModule,
} from './modules/environments/environments.module';
import { FactoriesApiModule, FactoriesWorkerModule } from './modules/factories/factories.module';
import { HealthModule } from './modules/health/health.module';
import { ModelsModule } from './modules/models/models.module';
import { RunsModule } from './modules/runs/runs.module';
import { SecretsApiModule } from './modules/secrets/secrets.module';
import { SkillsApiModule, SkillsModule } from './modules/skills/skills.module';
import { SchedulesModule } from './modules/schedules/schedules.module';
import { ScoresModule } from './modules/scores/scores.module';
import { BearerAuthGuard } from './modules/teams/bearer-auth.guard';
import { TeamsModule } from './modules/teams/teams.module';
import { WebhookFeaturesModule } from './modules/webhooks/webhook-features.module';
import { WorkersModule } from './modules/workers/workers.module';

@Global()
@Module({})
class ConfigModule {
  static forConfig(config: AppConfig): DynamicModule {
    return {
      module: ConfigModule,
      providers: [{ provide: APP_CONFIG, useValue: config }],
      exports: [APP_CONFIG],
    };
  }
}

/** The root module; which controllers and processors it wires depends on the roles configured. */
@Module({})
export class AppModule {
  static forConfig(config: AppConfig): DynamicModule {
    const api = config.roles.includes('api');
    const runs = RunsModule.forRoles(config.roles);
    return {
      module: AppModule,
      imports: [
        ConfigModule.forConfig(config),
        TypeOrmModule.forRoot({
          ...dataSourceOptions(config),
          autoLoadEntities: true,
          retryAttempts: 2,
          retryDelay: 1000,
        }),
        BullModule.forRoot({
          url: config.redis.url,
          prefix: config.redis.prefix,
          defaultJobOptions: { removeOnComplete: true, removeOnFail: true, attempts: 1 },
          settings: {
            lockDuration: config.runs.leaseMs,
            stalledInterval: config.runs.leaseMs,
            maxStalledCount: 1,
          },
        }),
        ScheduleModule.forRoot(),
        RedisModule,
        TeamsModule,
        ModelsModule,
        BlobsModule.forRoles(api),
        ArtifactsModule,
        EnvironmentsModule,
        SkillsModule,
        runs,
        ...(api ? [ConversationsModule, ArtifactsApiModule, ScoresModule.forRuns(runs)] : []),
        SchedulesModule.forRoles(config.roles, runs),
        WorkersModule.forRoles(config.roles, runs),
        ...(api ? [HealthModule] : []),
        ...(api ? [SecretsApiModule, FactoriesApiModule] : []),
        EnvironmentFeaturesModule.forRoles(config.roles, runs),
        ...(api ? [SkillsApiModule] : []),
        ...(config.roles.includes('worker') ? [FactoriesWorkerModule] : []),
        WebhookFeaturesModule.forRoles(config.roles, runs),
      ],
      providers: api
        ? [
            { provide: APP_GUARD, useClass: BearerAuthGuard },
            { provide: APP_FILTER, useClass: ProblemFilter },
          ]
        : [],
    };
  }
}
