/** What other modules may use of audit/: they import it from here only (ESLint rule ambient/import-through-index). */
export { SYSTEM_ACTOR, actorOf, systemActor } from './audit-actor';
export type { AuditActor, AuditBy } from './audit-actor';
export { AuditEvent } from './audit-event.entity';
export { AuditLog } from './audit-log.service';
export { AUDIT_ACTOR_TYPES } from './audit-vocabulary';
export type { AuditActorType } from './audit-vocabulary';
