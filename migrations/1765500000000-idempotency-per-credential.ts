import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `Idempotency-Key`s are scoped per credential (the API key or console session that sent them)
 * instead of per user, so `principal_id` now holds a key id or `session:…` (up to 64 characters).
 * An answer that carries a credential shown once is kept only encrypted (`response_sealed`, under
 * AMBIENT_SECRETS_KEY) or not at all (`shown_once` = 1 with no body). The rows there are deleted:
 * they were scoped per user and may hold such credentials in plain text, and they would expire
 * within AMBIENT_IDEMPOTENCY_TTL_HOURS anyway (a client retrying across the upgrade does the
 * operation again).
 */
export class IdempotencyPerCredential1765500000000 implements MigrationInterface {
  name = 'IdempotencyPerCredential1765500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM idempotency_keys`);
    await q.query(`ALTER TABLE idempotency_keys
      MODIFY principal_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
      ADD COLUMN shown_once TINYINT(1) NOT NULL DEFAULT 0,
      ADD COLUMN response_sealed MEDIUMBLOB NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM idempotency_keys`);
    await q.query(`ALTER TABLE idempotency_keys
      DROP COLUMN response_sealed,
      DROP COLUMN shown_once,
      MODIFY principal_id VARCHAR(22) CHARACTER SET ascii COLLATE ascii_bin NOT NULL`);
  }
}
