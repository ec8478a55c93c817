import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { Response } from 'express';
import { defer, from, lastValueFrom, Observable } from 'rxjs';
import { IdempotencyGate, type IdempotentRequest } from './idempotency-gate';

/**
 * `Idempotency-Key` on the handlers marked @Idempotent() (IdempotencyGate does the work). On
 * those routes only: an interceptor costs every request of its route Nest's rxjs pipeline.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(private readonly gate: IdempotencyGate) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const request = context.switchToHttp().getRequest<IdempotentRequest>();
    const key = this.gate.keyOf(request);
    if (key === undefined) return next.handle();
    const response = context.switchToHttp().getResponse<Response>();
    return defer(() =>
      from(
        this.gate.around(key, request, response, () =>
          lastValueFrom(next.handle(), { defaultValue: undefined }),
        ),
      ),
    );
  }
}
