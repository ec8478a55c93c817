import { Global, Module } from '@nestjs/common';
import { IdempotencyGate } from './idempotency-gate';
import { IdempotencyInterceptor } from './idempotency.interceptor';
import { IdempotencyStore } from './idempotency.store';

/**
 * The `Idempotency-Key` store and gate; global, since every module with an @Idempotent() route
 * instantiates the interceptor in its own scope. The api role adds the sweeper (AppModule).
 */
@Global()
@Module({
  providers: [IdempotencyStore, IdempotencyGate, IdempotencyInterceptor],
  exports: [IdempotencyStore, IdempotencyGate, IdempotencyInterceptor],
})
export class IdempotencyModule {}
