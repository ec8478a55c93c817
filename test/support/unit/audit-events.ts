import { AuditEvent } from '../../../src/modules/audit/audit-event.entity';

/** An audit row for specs that store rows raw: `id` padded to 22 characters, fixed time and actor. */
export function auditEventRow(
  teamId: string,
  id: string,
  details: AuditEvent['details'] = { ok: true },
): AuditEvent {
  return {
    id: id.padEnd(22, '0'),
    occurredAt: new Date('2026-11-26T10:00:00.123Z'),
    teamId,
    actorType: 'user',
    actorId: 'actor',
    actorName: null,
    actorRole: 'admin',
    onBehalfOfType: null,
    onBehalfOfId: null,
    onBehalfOfName: null,
    action: 'run.create',
    targetType: 'run',
    targetId: 'r1',
    outcome: 'success',
    requestId: null,
    ip: null,
    details,
  };
}
