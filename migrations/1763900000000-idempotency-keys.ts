import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `Idempotency-Key`s of create and action POSTs, per team and principal: the digest of the first
 * request, its answer once there is one (`response_status` NULL = still in flight, claimed until
 * `claimed_until`), kept until `expires_at` (AMBIENT_IDEMPOTENCY_TTL_HOURS). Works on MySQL 8 and
 * MariaDB 10.6+.
 */
export class IdempotencyKeys1763900000000 implements MigrationInterface {
  name = 'IdempotencyKeys1763900000000';

  async up(q: QueryRunner): Promise<void> {
    const id = (n: number) => `VARCHAR(${n}) CHARACTER SET ascii COLLATE ascii_bin`;
    await q.query(`CREATE TABLE idempotency_keys (
      team_id ${id(22)} NOT NULL,
      principal_id ${id(22)} NOT NULL,
      idem_key ${id(255)} NOT NULL,
      request_digest CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
      claim_token ${id(36)} NOT NULL,
      claimed_until DATETIME(3) NULL,
      response_status SMALLINT NULL,
      response_body MEDIUMTEXT NULL,
      created_at DATETIME(3) NOT NULL,
      expires_at DATETIME(3) NOT NULL,
      PRIMARY KEY (team_id, principal_id, idem_key),
      KEY ix_idempotency_keys_expires (expires_at)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE idempotency_keys`);
  }
}
