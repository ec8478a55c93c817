import { BullModule } from '@nestjs/bull';
import { DynamicModule, Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { bullQueueOptions } from '../common/redis/bull-options';
import { RedisModule } from '../common/redis/redis.module';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { dataSourceOptions } from '../database/database-setup';

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

/**
 * What every Ambient Nest application stands on (the main one and the ingress): the validated
 * config, a MySQL pool, Bull on Redis and Ambient's own Redis connections.
 */
export function infrastructureImports(config: AppConfig): DynamicModule[] {
  return [
    ConfigModule.forConfig(config),
    TypeOrmModule.forRoot({
      ...dataSourceOptions(config),
      autoLoadEntities: true,
      retryAttempts: 2,
      retryDelay: 1000,
    }),
    BullModule.forRoot(bullQueueOptions(config)),
    { module: RedisModule },
  ];
}
