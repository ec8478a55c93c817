import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { defer, from, lastValueFrom, Observable } from 'rxjs';
import { ApiError } from '../../common/errors/api-error';
import type { Principal } from '../../common/auth/principal';
import { IdempotencyClaim } from './idempotency-claim';
import {
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENT_REPLAYED_HEADER,
  parseIdempotencyKey,
  requestDigest,
} from './idempotency-key.header';
import { IdempotencyStore } from './idempotency.store';
import { IDEMPOTENT } from './idempotent.decorator';

/** Where a handler finds the claim of its request (CurrentIdempotencyClaim). */
type IdempotentRequest = Request & { idempotencyClaim?: IdempotencyClaim };

/**
 * `Idempotency-Key` on the handlers marked @Idempotent(): claims the key before the handler
 * runs, replays the stored answer of the same request, refuses another request with the key
 * (422) or one while the first is in flight (409). A 2xx answer is stored (unless the handler
 * recorded it in its own transaction); any error answer frees the key, since it changed nothing.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(
    private readonly reflector: Reflector,
    private readonly store: IdempotencyStore,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    if (!this.reflector.get<boolean>(IDEMPOTENT, context.getHandler())) return next.handle();
    const request = context.switchToHttp().getRequest<IdempotentRequest & { user?: Principal }>();
    const response = context.switchToHttp().getResponse<Response>();
    const key = parseIdempotencyKey(request.headers[IDEMPOTENCY_KEY_HEADER.toLowerCase()]);
    const principal = request.user;
    if (key === undefined || !principal) return next.handle();
    return defer(() => from(this.handle(key, principal, request, response, next)));
  }

  private async handle(
    key: string,
    principal: Principal,
    request: IdempotentRequest,
    response: Response,
    next: CallHandler,
  ): Promise<unknown> {
    const digest = requestDigest(request.method, request.originalUrl, request.body);
    const scope = { teamId: principal.teamId, principalId: principal.userId, key };
    const outcome = await this.store.claim(scope, digest);
    switch (outcome.kind) {
      case 'replay':
        response.status(outcome.status);
        response.setHeader(IDEMPOTENT_REPLAYED_HEADER, 'true');
        return outcome.body;
      case 'mismatch':
        throw new ApiError(
          'invalid_request',
          `${IDEMPOTENCY_KEY_HEADER}: "${key}" was already used for another request ` +
            '(method, path or body differ); use a new key for a new operation',
          { status: 422, title: 'Idempotency key reused' },
        );
      case 'in_flight':
        throw new ApiError(
          'conflict',
          `${IDEMPOTENCY_KEY_HEADER}: a request with "${key}" is still in flight; retry with ` +
            'the same key to get its answer',
          { headers: { 'Retry-After': String(outcome.retryAfterSeconds) } },
        );
    }
    const claim = outcome.claim;
    request.idempotencyClaim = claim;
    let body: unknown;
    try {
      body = await lastValueFrom(next.handle(), { defaultValue: undefined });
    } catch (err) {
      // If even this fails, the claim lapses after CLAIM_MS and a retry takes it over.
      await this.store.release(claim).catch(() => undefined);
      throw err;
    }
    const status = response.statusCode;
    if (claim.recordedInTransaction) return body;
    if (status >= 200 && status < 300 && !response.headersSent) {
      await this.store.complete(claim, status, body);
    } else {
      await this.store.release(claim);
    }
    return body;
  }
}
