import { Injectable, Logger } from '@nestjs/common';
import { loggedPath } from '../../../common/logging/http-logging';
import { AuditLog } from '../../audit';
import { AmbientMetrics } from '../../metrics';
import type { Principal } from '../../../common/auth/principal';
import type { Permission } from '../../../common/auth/roles';

/** One refused attempt: who asked for what, where. */
export interface AccessDenial {
  principal: Principal;
  permission: Permission;
  /** What the 403 says, e.g. `role "viewer" lacks permission "runs.create" (held by: admin, member)`. */
  reason: string;
  method: string;
  /** The request path as sent; the log and the audit event show it masked (loggedPath). */
  path: string;
  requestId: string | null;
  ip: string | null;
}

/**
 * Where every permission refusal goes before its 403 is answered: a warning log line and
 * `ambient_access_denied_total{permission,role}`. The audit log records denied attempts here too
 * (awaited, so the event exists before the caller sees the refusal).
 */
@Injectable()
export class AccessDenials {
  private readonly logger = new Logger('Access');

  constructor(
    private readonly metrics: AmbientMetrics,
    private readonly audit: AuditLog,
  ) {}

  /** The audit event's action is the permission refused (`secrets.write`). */
  record(denial: AccessDenial): Promise<void> {
    const { principal, permission } = denial;
    const path = loggedPath(denial.path);
    this.metrics.accessDenied(permission, principal.role);
    this.logger.warn(
      `denied ${denial.method} ${path}: ${denial.reason} (team ${principal.teamId}, ` +
        `user ${principal.userId}, key ${principal.keyId}, request ${denial.requestId ?? '-'})`,
    );
    return this.audit.recordDenied(principal, permission, null, {
      reason: denial.reason,
      method: denial.method,
      path,
    });
  }
}
