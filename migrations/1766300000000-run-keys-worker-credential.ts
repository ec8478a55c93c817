import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A run-scoped key handed to a self-hosted worker names the worker credential it went out over,
 * so that revoking the credential revokes every such key in the same transaction: the worker's
 * executions stop reporting whether or not its connection is still open. Keys of before name
 * none (their connections' keys are still revoked when the gateway closes them).
 */
export class RunKeysWorkerCredential1766300000000 implements MigrationInterface {
  name = 'RunKeysWorkerCredential1766300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE api_keys
      ADD COLUMN worker_credential_id VARCHAR(22) CHARACTER SET ascii COLLATE ascii_bin NULL,
      ADD KEY idx_api_keys_worker_credential (worker_credential_id, revoked_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE api_keys
      DROP KEY idx_api_keys_worker_credential,
      DROP COLUMN worker_credential_id`);
  }
}
