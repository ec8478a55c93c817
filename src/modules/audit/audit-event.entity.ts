import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import type { JsonObject } from '../../common/json';
import { asciiId } from '../../database/column-types';

import type { AuditActorType, AuditOutcome } from './audit-vocabulary';

/** One change made through the API (or one refused attempt), as the audit log keeps it. */
@Entity('audit_events')
@Index('ix_audit_events_team_time', ['teamId', 'occurredAt', 'id'])
@Index('ix_audit_events_team_action', ['teamId', 'action', 'occurredAt'])
@Index('ix_audit_events_team_actor', ['teamId', 'actorId', 'occurredAt'])
@Index('ix_audit_events_team_target', ['teamId', 'targetType', 'targetId', 'occurredAt'])
@Index('ix_audit_events_occurred', ['occurredAt'])
export class AuditEvent {
  @PrimaryColumn(asciiId(22))
  id: string;

  @Column({ name: 'occurred_at', type: 'datetime', precision: 3 })
  occurredAt: Date;

  @Column({ name: 'team_id', ...asciiId(22) })
  teamId: string;

  @Column({ name: 'actor_type', type: 'varchar', length: 16 })
  actorType: AuditActorType;

  @Column({ name: 'actor_id', type: 'varchar', length: 64 })
  actorId: string;

  @Column({ name: 'actor_name', type: 'varchar', length: 255, nullable: true })
  actorName: string | null;

  @Column({ name: 'actor_role', type: 'varchar', length: 32, nullable: true })
  actorRole: string | null;

  /** An API key's owner: the person or agent identity the key acts for (null otherwise). */
  @Column({ name: 'on_behalf_of_type', type: 'varchar', length: 16, nullable: true })
  onBehalfOfType: AuditActorType | null;

  @Column({ name: 'on_behalf_of_id', type: 'varchar', length: 64, nullable: true })
  onBehalfOfId: string | null;

  @Column({ name: 'on_behalf_of_name', type: 'varchar', length: 255, nullable: true })
  onBehalfOfName: string | null;

  /** `<resource>.<verb>`, e.g. `run.create`, `webhook.rotate_secret`. */
  @Column({ type: 'varchar', length: 64 })
  action: string;

  @Column({ name: 'target_type', type: 'varchar', length: 32, nullable: true })
  targetType: string | null;

  @Column({ name: 'target_id', type: 'varchar', length: 255, nullable: true })
  targetId: string | null;

  @Column({ type: 'varchar', length: 16 })
  outcome: AuditOutcome;

  @Column({ name: 'request_id', type: 'varchar', length: 128, nullable: true })
  requestId: string | null;

  @Column({ type: 'varchar', length: 64, nullable: true })
  ip: string | null;

  /** What changed, never a secret value. */
  @Column({ type: 'json', nullable: true })
  details: JsonObject | null;
}
