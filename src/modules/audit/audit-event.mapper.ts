import type { AuditEventDto } from './audit-event.dto';
import type { AuditEvent } from './audit-event.entity';

/** An event as GET /audit-events and `audit export` show it. */
export function toAuditEventDto(event: AuditEvent): AuditEventDto {
  return {
    id: event.id,
    occurred_at: event.occurredAt.toISOString(),
    actor: {
      type: event.actorType,
      id: event.actorId,
      name: event.actorName,
      role: event.actorRole,
      on_behalf_of: event.onBehalfOfType
        ? { type: event.onBehalfOfType, id: event.onBehalfOfId!, name: event.onBehalfOfName }
        : null,
    },
    action: event.action,
    target: event.targetType ? { type: event.targetType, id: event.targetId } : null,
    outcome: event.outcome,
    request_id: event.requestId,
    ip: event.ip,
    details: event.details ?? {},
  };
}
