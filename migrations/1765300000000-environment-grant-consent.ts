import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Sharing needs consent and pins what was shared: an environment counts its versions, and a grant
 * keeps the version (name and config) an admin of the receiving team accepted. Grants made before
 * consent existed were never accepted, so they start pending. A guest team's own setup outcome is
 * kept on its grant, so the owner's `setup_failed` says nothing of guests' runs.
 */
export class EnvironmentGrantConsent1765300000000 implements MigrationInterface {
  name = 'EnvironmentGrantConsent1765300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE environments
      ADD COLUMN version INT UNSIGNED NOT NULL DEFAULT 1 AFTER config`);
    await q.query(`ALTER TABLE environment_grants
      ADD COLUMN accepted_version INT UNSIGNED NULL,
      ADD COLUMN accepted_config JSON NULL,
      ADD COLUMN accepted_at DATETIME(3) NULL,
      ADD COLUMN accepted_by VARCHAR(22) NULL,
      ADD COLUMN setup_failed BOOLEAN NOT NULL DEFAULT FALSE`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE environment_grants
      DROP COLUMN setup_failed, DROP COLUMN accepted_by, DROP COLUMN accepted_at,
      DROP COLUMN accepted_config, DROP COLUMN accepted_version`);
    await q.query('ALTER TABLE environments DROP COLUMN version');
  }
}
