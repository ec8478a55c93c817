import {
  applyDecorators,
  createParamDecorator,
  ExecutionContext,
  UseInterceptors,
} from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';
import type { IdempotencyClaim } from './idempotency-claim';
import { IDEMPOTENCY_KEY_HEADER, MAX_IDEMPOTENCY_KEY_LENGTH } from './idempotency-key.header';
import { IdempotencyInterceptor } from './idempotency.interceptor';

export interface IdempotentOptions {
  /**
   * The handler calls IdempotencyGate.around itself (the run creation routes: a creation then
   * costs no interceptor pipeline when it has no key).
   */
  byHandler?: boolean;
}

/**
 * A create or action POST that honours `Idempotency-Key` (IdempotencyInterceptor on this route,
 * or the handler through IdempotencyGate), documented as a header parameter of the operation.
 */
export function Idempotent(options: IdempotentOptions = {}) {
  return applyDecorators(
    ...(options.byHandler ? [] : [UseInterceptors(IdempotencyInterceptor)]),
    ApiHeader({
      name: IDEMPOTENCY_KEY_HEADER,
      required: false,
      description:
        'A unique key per intended operation (e.g. a random UUID), reused on every retry of it: ' +
        'the first successful answer is replayed (same status and body, `Idempotent-Replayed: ' +
        'true`) instead of doing it again; another request with the same key → 422; while the ' +
        'first is in flight → 409 with Retry-After. Scoped to the team and caller, kept 24 hours ' +
        '(AMBIENT_IDEMPOTENCY_TTL_HOURS). Error answers are not stored.',
      schema: { type: 'string', minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY_LENGTH },
    }),
  );
}

/**
 * The `Idempotency-Key` claim of the request (undefined without a key), for a handler that
 * records its answer in the transaction of what it creates.
 */
export const CurrentIdempotencyClaim = createParamDecorator(
  (_data: unknown, ctx: ExecutionContext): IdempotencyClaim | undefined =>
    ctx.switchToHttp().getRequest<{ idempotencyClaim?: IdempotencyClaim }>().idempotencyClaim,
);
