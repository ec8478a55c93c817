import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * API keys get a role (admin, member, viewer) and an optional expiry. A key without a role acts
 * with its user's (agent identity keys: member; run-scoped keys act only for their run). Every
 * existing key of a person becomes `admin`: before roles, every team key could do everything.
 */
export class ApiKeyRoles1763925000000 implements MigrationInterface {
  name = 'ApiKeyRoles1763925000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE api_keys
      ADD COLUMN role VARCHAR(16) NULL,
      ADD COLUMN expires_at DATETIME(3) NULL`);
    await q.query(`UPDATE api_keys k JOIN users u ON u.id = k.user_id
        SET k.role = 'admin'
      WHERE k.run_id IS NULL AND u.type = 'user'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE api_keys DROP COLUMN expires_at, DROP COLUMN role`);
  }
}
