import { DynamicModule, Global, Module, Type } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { IdempotencyGate } from './idempotency-gate';
import { IdempotencyInterceptor } from './idempotency.interceptor';
import { IdempotencyKey } from './idempotency-key.entity';
import { IdempotencyStore } from './idempotency.repository';
import { SHOWN_ONCE_CIPHER, ShownOnceCipher } from './shown-once-cipher';

/**
 * The `Idempotency-Key` store and gate; global, since every module with an @Idempotent() route
 * instantiates the interceptor in its own scope. The api role adds the sweeper (AppModule).
 */
@Global()
@Module({})
export class IdempotencyModule {
  /**
   * With the cipher of shown-once answers (the application's SecretCipher: passed in, since the
   * secrets module itself has idempotent routes and so imports this one).
   */
  static withCipher(cipher: Type<ShownOnceCipher>): DynamicModule {
    return {
      module: IdempotencyModule,
      imports: [TypeOrmModule.forFeature([IdempotencyKey])],
      providers: [
        { provide: SHOWN_ONCE_CIPHER, useClass: cipher },
        IdempotencyStore,
        IdempotencyGate,
        IdempotencyInterceptor,
      ],
      exports: [IdempotencyStore, IdempotencyGate, IdempotencyInterceptor],
    };
  }
}
