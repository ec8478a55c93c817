import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { IS_PUBLIC } from '../../../common/auth/public.decorator';
import { ApiError } from '../../../common/errors/api-error';
import { requestIdOf } from '../../../common/request-id';
import type { Principal } from '../../../common/auth/principal';
import { AccessDenials } from './access-denials.service';
import { REQUIRED_PERMISSION } from '../../../common/auth/require-permission.decorator';
import { Permission, refusalOf } from '../../../common/auth/roles';

/**
 * Global guard after authentication: the caller's role must hold the permission the route
 * declares (@RequirePermission), and an agent identity's key nothing only people may do. The one
 * place roles are enforced; a refusal is recorded by AccessDenials and answered 403
 * `not_authorized` naming the role and the permission.
 */
@Injectable()
export class PermissionGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly denials: AccessDenials,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets)) return true;
    const permission = this.reflector.getAllAndOverride<Permission | undefined>(
      REQUIRED_PERMISSION,
      targets,
    );
    const request = context.switchToHttp().getRequest<Request & { user: Principal }>();
    const principal = request.user;
    if (permission === undefined) {
      // Start-up refuses such a route (RoutePermissionsCheck); failing closed all the same.
      throw new ApiError('not_authorized', 'this route declares no permission');
    }
    // The authentication guard let a run-scoped key reach only run-scoped routes, and only it.
    if (permission === 'runs.report') return Boolean(principal.runId);
    const refusal = refusalOf(principal, permission);
    if (refusal === null) return true;
    await this.denials.record({
      principal,
      permission,
      reason: refusal,
      method: request.method,
      path: request.path,
      requestId: requestIdOf(context.switchToHttp().getResponse<Response>()) ?? null,
      ip: request.ip ?? null,
    });
    throw new ApiError('not_authorized', refusal);
  }
}
