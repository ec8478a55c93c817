import { BullModule } from '@nestjs/bull';
import { DynamicModule, Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { RedisModule } from '../common/redis/redis.module';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { dataSourceOptions } from '../database/database-setup';
import { SecretsModule } from '../modules/secrets/secrets.module';
import { WebhooksModule } from '../modules/webhooks/webhooks.module';
import { IngressController } from './ingress.controller';
import { IngressService } from './ingress.service';
import { IngressRateLimiter } from './rate-limiter';

@Global()
@Module({})
class IngressConfigModule {
  static forConfig(config: AppConfig): DynamicModule {
    return {
      module: IngressConfigModule,
      providers: [{ provide: APP_CONFIG, useValue: config }],
      exports: [APP_CONFIG],
    };
  }
}

/**
 * The webhook ingress: its own Nest application (role `ingress`), with its own MySQL pool and
 * Redis connections, so a flood of deliveries never queues behind API requests.
 */
@Module({})
export class IngressModule {
  static forConfig(config: AppConfig): DynamicModule {
    return {
      module: IngressModule,
      imports: [
        IngressConfigModule.forConfig(config),
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
        }),
        RedisModule,
        SecretsModule,
        WebhooksModule,
      ],
      controllers: [IngressController],
      providers: [IngressService, IngressRateLimiter],
    };
  }
}
