import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiExtension } from '@nestjs/swagger';
import { Permission, rolesWith } from './roles';

export const REQUIRED_PERMISSION = 'ambient:requiredPermission';

/**
 * The permission a route needs (checked by PermissionGuard), also published on the operation as
 * `x-ambient-permission` and `x-ambient-roles` (the roles that hold it). Every authenticated route
 * carries one: start-up fails on a route without (RoutePermissionsCheck).
 */
export const RequirePermission = (permission: Permission) =>
  applyDecorators(
    SetMetadata(REQUIRED_PERMISSION, permission),
    ApiExtension('x-ambient-permission', permission),
    ApiExtension('x-ambient-roles', rolesWith(permission)),
  );
