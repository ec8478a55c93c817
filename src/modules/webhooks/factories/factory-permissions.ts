import { ApiError } from '../../../common/errors/api-error';
import type { Principal } from '../../../common/auth/principal';
import type { Factory } from './entities/factory.entity';

/** Anyone in the team may read a factory; its creator and team admins may change it. */
export function assertCanManage(principal: Principal, factory: Factory): void {
  if (principal.role === 'admin' || factory.createdBy === principal.userId) return;
  throw new ApiError(
    'not_authorized',
    `managing factory "${factory.name}" needs a team admin or the factory's creator`,
  );
}
