import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The bearer tokens an identity provider's SCIM client uses to deactivate a team's people: one or
 * more per team, made by an admin and shown once (only the SHA-256 of the secret is kept, found
 * by its public prefix), revocable.
 */
export class ScimTokens1765500000001 implements MigrationInterface {
  name = 'ScimTokens1765500000001';

  async up(q: QueryRunner): Promise<void> {
    const id = (n: number) => `VARCHAR(${n}) CHARACTER SET ascii COLLATE ascii_bin`;
    await q.query(`CREATE TABLE scim_tokens (
      id ${id(22)} NOT NULL,
      team_id ${id(22)} NOT NULL,
      name VARCHAR(128) NOT NULL,
      prefix ${id(16)} NOT NULL,
      secret_hash BINARY(32) NOT NULL,
      created_by ${id(22)} NOT NULL,
      created_at DATETIME(3) NOT NULL,
      last_used_at DATETIME(3) NULL,
      revoked_at DATETIME(3) NULL,
      PRIMARY KEY (id),
      UNIQUE KEY uq_scim_tokens_prefix (prefix),
      KEY ix_scim_tokens_team (team_id, created_at)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE scim_tokens`);
  }
}
