import { ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import { IS_PUBLIC } from '../../common/auth/public.decorator';
import { ApiError } from '../../common/errors/api-error';

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

  override handleRequest<T>(err: unknown, user: T | false): T {
    if (err) throw err;
    if (!user) {
      throw new ApiError(
        'authentication_required',
        'send a valid API key as "Authorization: Bearer <key>"',
      );
    }
    return user;
  }
}
