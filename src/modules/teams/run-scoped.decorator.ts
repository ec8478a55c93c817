import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiExtension } from '@nestjs/swagger';
import { RequirePermission } from '../../common/auth/require-permission.decorator';

export const RUN_SCOPED = 'ambient:runScoped';

/**
 * Marks a route for run-scoped keys, the keys one execution of a run reports with: only they are
 * accepted there, and they are refused on every route without this mark. No role holds the
 * route's permission (`x-ambient-roles: []`); `x-ambient-key: run-scoped` says who may call it.
 */
export const RunScoped = () =>
  applyDecorators(
    SetMetadata(RUN_SCOPED, true),
    RequirePermission('runs.report'),
    ApiExtension('x-ambient-key', 'run-scoped'),
  );
