import {
  applyDecorators,
  createParamDecorator,
  ExecutionContext,
  SetMetadata,
  UseInterceptors,
} from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';
import type { IdempotencyClaim } from './idempotency-claim';
import { IDEMPOTENCY_KEY_HEADER, MAX_IDEMPOTENCY_KEY_LENGTH } from './idempotency-key.header';
import { IdempotencyInterceptor } from './idempotency.interceptor';
import { SHOWN_ONCE } from './shown-once-cipher';

export interface IdempotentOptions {
  /**
   * The handler calls IdempotencyGate.around itself (the run creation routes: a creation then
   * costs no interceptor pipeline when it has no key).
   */
  byHandler?: boolean;
  /**
   * The answer carries a credential that is shown once (a key, a secret, a token): its stored
   * copy is encrypted under AMBIENT_SECRETS_KEY, and without a key it is not kept, so a replay
   * answers 409 `already_shown`. A handler that calls IdempotencyGate.around passes it itself.
   */
  shownOnce?: boolean;
}

/**
 * A create or action POST that honours `Idempotency-Key` (IdempotencyInterceptor on this route,
 * or the handler through IdempotencyGate), documented as a header parameter of the operation.
 */
export function Idempotent(options: IdempotentOptions = {}) {
  return applyDecorators(
    ...(options.byHandler ? [] : [UseInterceptors(IdempotencyInterceptor)]),
    ...(options.shownOnce ? [SetMetadata(SHOWN_ONCE, true)] : []),
    ApiHeader({
      name: IDEMPOTENCY_KEY_HEADER,
      required: false,
      description:
        'A unique key per intended operation (e.g. a random UUID), reused on every retry of it: ' +
        'the first successful answer is replayed (same status and body, `Idempotent-Replayed: ' +
        'true`) instead of doing it again; another request with the same key → 422; while the ' +
        'first is in flight → 409 with Retry-After. Scoped to the API key or console session that ' +
        'sends it, kept 24 hours (AMBIENT_IDEMPOTENCY_TTL_HOURS). Error answers are not stored.' +
        (options.shownOnce
          ? ' This answer carries a credential shown once: it is replayed only while the server ' +
            'keeps it encrypted (AMBIENT_SECRETS_KEY), otherwise 409 `already_shown`.'
          : ''),
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
