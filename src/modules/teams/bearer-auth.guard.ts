import { ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import { IS_PUBLIC } from '../../common/auth/public.decorator';
import { ApiError } from '../../common/errors/api-error';
import type { Principal } from './principal';
import { RUN_SCOPED } from './run-scoped.decorator';

/** Global guard: every route needs `Authorization: Bearer <key>` unless marked @Public(). */
@Injectable()
export class BearerAuthGuard extends AuthGuard('bearer') {
  constructor(private readonly reflector: Reflector) {
    super({ session: false });
  }

  override canActivate(context: ExecutionContext) {
    const isPublic = this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (isPublic) return true;
    return super.canActivate(context);
  }

  override handleRequest<T>(
    err: unknown,
    user: T | false,
    _info: unknown,
    context: ExecutionContext,
  ): T {
    if (err) throw err;
    if (!user) {
      throw new ApiError(
        'authentication_required',
        'send a valid API key as "Authorization: Bearer <key>"',
      );
    }
    this.assertKeyScope(user as unknown as Principal, context);
    return user;
  }

  /** Run-scoped keys work only on run-scoped routes, and those take nothing else. */
  private assertKeyScope(principal: Principal, context: ExecutionContext): void {
    const runScopedRoute =
      this.reflector.getAllAndOverride<boolean>(RUN_SCOPED, [
        context.getHandler(),
        context.getClass(),
      ]) ?? false;
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
}
