import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The team secret whose token authenticates a repository-backed factory's git fetches (private
 * repositories). Works on MySQL 8 and MariaDB 10.6+.
 */
export class FactoryRepositoryCredentials1763870000000 implements MigrationInterface {
  name = 'FactoryRepositoryCredentials1763870000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE factories
      ADD COLUMN repository_credentials_secret VARCHAR(128) NULL AFTER repository_path`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE factories DROP COLUMN repository_credentials_secret`);
  }
}
