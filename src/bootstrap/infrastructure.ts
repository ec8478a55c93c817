import { BullModule } from '@nestjs/bull';
import { DynamicModule, Global, Module } from '@nestjs/common';
import { bullQueueOptions } from '../common/redis/bull-options';
import { RedisModule } from '../common/redis/redis.module';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { DatabaseModule } from '../database/database.module';
import { ExtensionSet } from '../extensions/extension-set';
import { ExtensionsModule } from '../extensions/extensions.module';
import { AmbientMetrics } from '../modules/metrics/ambient-metrics';
import { MetricsModule } from '../modules/metrics/metrics.module';

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

/** What differs between the applications that stand on the infrastructure. */
export interface InfrastructureOptions {
  metrics: AmbientMetrics;
  /** The Bull queues whose gauges this application reads (null: none). */
  probedQueues: readonly string[] | null;
  extensions: ExtensionSet;
  /** Whether it serves HTTP requests: its pool then keeps connections for them. */
  servesHttp: boolean;
}

/**
 * What every Ambient Nest application stands on (the main one and the ingress): the validated
 * config, a MySQL pool, Bull on Redis, Ambient's own Redis connections and the process's metrics,
 * and the contributions of the extensions (built-ins first) to the extension points.
 */
export function infrastructureImports(
  config: AppConfig,
  options: InfrastructureOptions,
): DynamicModule[] {
  return [
    ConfigModule.forConfig(config),
    ExtensionsModule.forExtensions(options.extensions),
    DatabaseModule.forConfig(config, { servesHttp: options.servesHttp }),
    MetricsModule.forInstance(options.metrics, options.probedQueues),
    BullModule.forRoot(bullQueueOptions(config)),
    { module: RedisModule },
  ];
}
