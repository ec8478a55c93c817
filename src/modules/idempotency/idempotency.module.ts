import { Module } from '@nestjs/common';
import { IdempotencyStore } from './idempotency.store';

/** The `Idempotency-Key` store; the api role adds its interceptor and sweeper (AppModule). */
@Module({ providers: [IdempotencyStore], exports: [IdempotencyStore] })
export class IdempotencyModule {}
