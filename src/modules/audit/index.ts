/** What other modules may use of audit/: they import it from here only (ESLint rule ambient/import-through-index). */
export { SYSTEM_ACTOR } from './audit-actor';
export type { AuditBy } from './audit-actor';
export { AuditEvent } from './audit-event.entity';
export { AuditLog } from './audit-log.service';
