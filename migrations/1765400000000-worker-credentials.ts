import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Worker credentials: what a self-hosted worker registers with, scoped to one worker id or a
 * prefix of ids. Only the SHA-256 of the secret is stored; `prefix` is its indexed lookup part.
 */
export class WorkerCredentials1765400000000 implements MigrationInterface {
  name = 'WorkerCredentials1765400000000';

  async up(q: QueryRunner): Promise<void> {
    const id = (n: number) => `VARCHAR(${n}) CHARACTER SET ascii COLLATE ascii_bin`;
    await q.query(`CREATE TABLE worker_credentials (
      id ${id(22)} NOT NULL,
      team_id ${id(22)} NOT NULL,
      name VARCHAR(128) NOT NULL,
      worker_id ${id(129)} NOT NULL,
      prefix ${id(16)} NOT NULL,
      secret_hash BINARY(32) NOT NULL,
      created_by ${id(22)} NULL,
      created_at DATETIME(3) NOT NULL,
      last_used_at DATETIME(3) NULL,
      revoked_at DATETIME(3) NULL,
      PRIMARY KEY (id),
      UNIQUE KEY uq_worker_credentials_prefix (prefix),
      KEY idx_worker_credentials_team (team_id, created_at)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE worker_credentials`);
  }
}
