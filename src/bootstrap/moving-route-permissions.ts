import { RequirePermission } from '../modules/teams/access/require-permission.decorator';
import { ConnectedWorkersController } from '../modules/workers/connected-workers.controller';

/**
 * The permission of a route whose controller lives in a directory being moved into
 * src/modules/execution/ (which this change must not edit). Once moved, the decorator goes on the
 * method itself and this file goes away.
 */
export function annotateMovingRoutes(): void {
  const method = 'list';
  const descriptor = Object.getOwnPropertyDescriptor(ConnectedWorkersController.prototype, method);
  if (descriptor)
    RequirePermission('workers.read')(ConnectedWorkersController.prototype, method, descriptor);
}
