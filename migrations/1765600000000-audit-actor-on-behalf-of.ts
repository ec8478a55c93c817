import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An API key's audit events name the key (`actor_name` is the key's name) and, in these columns,
 * the person or agent identity the key belongs to. NULL for actors that act for themselves and for
 * events written before.
 */
export class AuditActorOnBehalfOf1765600000000 implements MigrationInterface {
  name = 'AuditActorOnBehalfOf1765600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE audit_events
      ADD COLUMN on_behalf_of_type VARCHAR(16) NULL AFTER actor_role,
      ADD COLUMN on_behalf_of_id VARCHAR(64) NULL AFTER on_behalf_of_type,
      ADD COLUMN on_behalf_of_name VARCHAR(255) NULL AFTER on_behalf_of_id`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE audit_events
      DROP COLUMN on_behalf_of_name, DROP COLUMN on_behalf_of_id, DROP COLUMN on_behalf_of_type`);
  }
}
