import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The audit log: one row per change made through the API (written in the change's transaction)
 * and per refused attempt. Read newest first per team, by keyset over (occurred_at, id); the other
 * keys serve the list's filters and the retention sweep (AMBIENT_AUDIT_RETENTION_DAYS).
 */
export class AuditEvents1763930000000 implements MigrationInterface {
  name = 'AuditEvents1763930000000';

  async up(q: QueryRunner): Promise<void> {
    const id = (n: number) => `VARCHAR(${n}) CHARACTER SET ascii COLLATE ascii_bin`;
    await q.query(`CREATE TABLE audit_events (
      id ${id(22)} NOT NULL,
      occurred_at DATETIME(3) NOT NULL,
      team_id ${id(22)} NOT NULL,
      actor_type VARCHAR(16) NOT NULL,
      actor_id VARCHAR(64) NOT NULL,
      actor_name VARCHAR(255) NULL,
      actor_role VARCHAR(32) NULL,
      action VARCHAR(64) NOT NULL,
      target_type VARCHAR(32) NULL,
      target_id VARCHAR(255) NULL,
      outcome VARCHAR(16) NOT NULL,
      request_id VARCHAR(128) NULL,
      ip VARCHAR(64) NULL,
      details JSON NULL,
      PRIMARY KEY (id),
      KEY ix_audit_events_team_time (team_id, occurred_at, id),
      KEY ix_audit_events_team_action (team_id, action, occurred_at),
      KEY ix_audit_events_team_actor (team_id, actor_id, occurred_at),
      KEY ix_audit_events_team_target (team_id, target_type, target_id, occurred_at),
      KEY ix_audit_events_occurred (occurred_at)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE audit_events`);
  }
}
