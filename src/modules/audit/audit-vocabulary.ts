/** The audit log's closed vocabularies (no decorators: the console imports them too). */
export const AUDIT_ACTOR_TYPES = ['api_key', 'user', 'agent', 'run', 'system'] as const;
export type AuditActorType = (typeof AUDIT_ACTOR_TYPES)[number];

export const AUDIT_OUTCOMES = ['success', 'denied', 'failed'] as const;
export type AuditOutcome = (typeof AUDIT_OUTCOMES)[number];
