import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Console single sign-on: users signed in through an OpenID provider (known by issuer and subject,
 * one user per pair), their sessions (a row per signed-in browser, found by the SHA-256 of the
 * cookie's random id, so a read of the table gives no usable cookie), and the short-lived state
 * of sign-ins under way (PKCE verifier and nonce, kept server-side and used once).
 */
export class SignInSessions1764200000000 implements MigrationInterface {
  name = 'SignInSessions1764200000000';

  async up(q: QueryRunner): Promise<void> {
    const id = (n: number) => `VARCHAR(${n}) CHARACTER SET ascii COLLATE ascii_bin`;
    await q.query(`ALTER TABLE users
      ADD COLUMN oidc_issuer VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
      ADD COLUMN oidc_subject VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
      ADD COLUMN last_sign_in_at DATETIME(3) NULL,
      ADD UNIQUE KEY uq_users_oidc_subject (oidc_issuer, oidc_subject)`);
    await q.query(`CREATE TABLE user_sessions (
      id ${id(64)} NOT NULL,
      user_id ${id(22)} NOT NULL,
      team_id ${id(22)} NOT NULL,
      csrf_token ${id(64)} NOT NULL,
      created_at DATETIME(3) NOT NULL,
      expires_at DATETIME(3) NOT NULL,
      PRIMARY KEY (id),
      KEY ix_user_sessions_user (user_id),
      KEY ix_user_sessions_expires (expires_at),
      CONSTRAINT fk_user_sessions_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
    await q.query(`CREATE TABLE oidc_login_attempts (
      state ${id(64)} NOT NULL,
      code_verifier ${id(128)} NOT NULL,
      nonce ${id(64)} NOT NULL,
      return_to VARCHAR(512) NOT NULL,
      expires_at DATETIME(3) NOT NULL,
      PRIMARY KEY (state),
      KEY ix_oidc_login_attempts_expires (expires_at)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE oidc_login_attempts`);
    await q.query(`DROP TABLE user_sessions`);
    await q.query(`ALTER TABLE users DROP INDEX uq_users_oidc_subject,
      DROP COLUMN last_sign_in_at, DROP COLUMN oidc_subject, DROP COLUMN oidc_issuer`);
  }
}
