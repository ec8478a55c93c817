import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { IS_PUBLIC } from '../../../common/auth/public.decorator';
import { ApiError } from '../../../common/errors/api-error';
import type { Principal } from '../../../common/auth/principal';
import { RUN_SCOPED } from '../run-scoped.decorator';
import { AuthStrategyRegistry } from './auth-strategy-registry';

/**
 * Global guard: every route needs a caller some auth strategy recognises, unless marked
 * @Public(). Sets `request.user` to the principal; the permission guard runs next.
 */
@Injectable()
export class AuthenticationGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly strategies: AuthStrategyRegistry,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (this.metadata(IS_PUBLIC, context)) return true;
    const request = context.switchToHttp().getRequest<Request & { user?: Principal }>();
    const principal = await this.strategies.authenticate(request);
    if (!principal) {
      throw new ApiError(
        'authentication_required',
        'send a valid API key as "Authorization: Bearer <key>"',
      );
    }
    this.assertKeyScope(principal, context);
    request.user = principal;
    return true;
  }

  /** Run-scoped keys work only on run-scoped routes, and those take nothing else. */
  private assertKeyScope(principal: Principal, context: ExecutionContext): void {
    const runScopedRoute = this.metadata(RUN_SCOPED, context);
    if (runScopedRoute && !principal.runId) {
      throw new ApiError('not_authorized', 'this endpoint takes only the run-scoped key of a run');
    }
    if (!runScopedRoute && principal.runId) {
      throw new ApiError(
        'not_authorized',
        `a run-scoped key may only report for its run (${principal.runId}) through /harness-support`,
      );
    }
  }

  private metadata(key: string, context: ExecutionContext): boolean {
    return (
      this.reflector.getAllAndOverride<boolean>(key, [context.getHandler(), context.getClass()]) ??
      false
    );
  }
}
