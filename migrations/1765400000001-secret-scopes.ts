import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Secret scopes: a team secret may be limited to environments, agent identities or schedules
 * (`scope`, NULL: every run of the team, as before), and a webhook's signing secret or URL token
 * is marked `purpose = 'webhook'`: the server's own, never given to a run. Secrets webhooks
 * created before are marked here.
 */
export class SecretScopes1765400000001 implements MigrationInterface {
  name = 'SecretScopes1765400000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE team_secrets
      ADD COLUMN scope JSON NULL AFTER description,
      ADD COLUMN purpose VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NULL AFTER scope`);
    await q.query(`UPDATE team_secrets s
      JOIN webhooks w ON w.team_id = s.team_id AND w.secret_name = s.name
      SET s.purpose = 'webhook'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE team_secrets DROP COLUMN purpose, DROP COLUMN scope`);
  }
}
