import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Response } from 'express';
import { defer, from, lastValueFrom, Observable } from 'rxjs';
import { IdempotencyGate, type IdempotentRequest } from './idempotency-gate';
import { SHOWN_ONCE } from './shown-once-cipher';

/**
 * `Idempotency-Key` on the handlers marked @Idempotent() (IdempotencyGate does the work). On
 * those routes only: an interceptor costs every request of its route Nest's rxjs pipeline.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(
    private readonly gate: IdempotencyGate,
    private readonly reflector: Reflector,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const request = context.switchToHttp().getRequest<IdempotentRequest>();
    const key = this.gate.keyOf(request);
    if (key === undefined) return next.handle();
    const response = context.switchToHttp().getResponse<Response>();
    const shownOnce = this.reflector.get<boolean | undefined>(SHOWN_ONCE, context.getHandler());
    return defer(() =>
      from(
        this.gate.around(
          key,
          request,
          response,
          () => lastValueFrom(next.handle(), { defaultValue: undefined }),
          { shownOnce },
        ),
      ),
    );
  }
}
