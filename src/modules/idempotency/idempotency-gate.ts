import { Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ApiError } from '../../common/errors/api-error';
import type { Principal } from '../../common/auth/principal';
import type { IdempotencyClaim } from './idempotency-claim';
import {
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENT_REPLAYED_HEADER,
  parseIdempotencyKey,
  requestDigest,
} from './idempotency-key.header';
import { IdempotencyStore } from './idempotency.repository';

/** Where a handler finds the claim of its request (CurrentIdempotencyClaim). */
export type IdempotentRequest = Request & { idempotencyClaim?: IdempotencyClaim; user?: Principal };

/**
 * What `Idempotency-Key` does around a handler: claims the key (per team and credential: the API
 * key or console session that sent it) before the handler runs, replays
 * the stored answer of the same request, refuses another request with the key (422) or one while
 * the first is in flight (409). A 2xx answer is stored (unless the handler recorded it in its own
 * transaction); any error answer frees the key, since it changed nothing. Used by
 * IdempotencyInterceptor, and called directly by the run creation handlers (see Idempotent).
 */
@Injectable()
export class IdempotencyGate {
  constructor(private readonly store: IdempotencyStore) {}

  /** The request's key when it has one and an authenticated caller; else it runs as it is. */
  keyOf(request: IdempotentRequest): string | undefined {
    if (!request.user) return undefined;
    return parseIdempotencyKey(request.headers[IDEMPOTENCY_KEY_HEADER.toLowerCase()]);
  }

  /** Runs `work` under the key's claim (set on the request for CurrentIdempotencyClaim). */
  async around(
    key: string,
    request: IdempotentRequest,
    response: Response,
    work: (claim: IdempotencyClaim) => Promise<unknown>,
    options: { shownOnce?: boolean } = {},
  ): Promise<unknown> {
    const principal = request.user!;
    const digest = requestDigest(request.method, request.originalUrl, request.body);
    // Per credential: another key or session of the same person never gets this answer.
    const scope = {
      teamId: principal.teamId,
      principalId: principal.keyId,
      key,
      shownOnce: options.shownOnce,
    };
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
      case 'already_shown':
        throw new ApiError(
          'already_shown',
          `${IDEMPOTENCY_KEY_HEADER}: "${key}" was answered with a credential that is shown ` +
            'once and not kept; it was created: list it, or revoke it and create another',
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
      body = await work(claim);
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
