import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Notifications: a team's outgoing webhook endpoints and their delivery log. A delivery row is
 * written in the transaction of what it announces (a run's end), so it is the outbox: the worker
 * sends what is due, retries with backoff, and a sweeper re-queues what a lost job left due.
 */
export class NotificationEndpoints1765700000000 implements MigrationInterface {
  name = 'NotificationEndpoints1765700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE notification_endpoints (
      id VARCHAR(22) NOT NULL PRIMARY KEY,
      team_id VARCHAR(22) NOT NULL,
      url VARCHAR(2048) NOT NULL,
      events VARCHAR(512) NOT NULL,
      format VARCHAR(16) NOT NULL,
      enabled TINYINT(1) NOT NULL,
      secret_ciphertext BLOB NOT NULL,
      secret_updated_at DATETIME(3) NOT NULL,
      created_at DATETIME(3) NOT NULL,
      updated_at DATETIME(3) NOT NULL,
      KEY idx_notification_endpoints_team (team_id, created_at)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
    await q.query(`CREATE TABLE notification_deliveries (
      id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
      endpoint_id VARCHAR(22) NOT NULL,
      message_id VARCHAR(64) NOT NULL,
      event VARCHAR(64) NOT NULL,
      payload MEDIUMTEXT NOT NULL,
      status VARCHAR(16) NOT NULL,
      attempts INT NOT NULL,
      response_code INT NULL,
      last_error VARCHAR(1024) NULL,
      next_attempt_at DATETIME(3) NULL,
      created_at DATETIME(3) NOT NULL,
      last_attempt_at DATETIME(3) NULL,
      KEY idx_notification_deliveries_endpoint (endpoint_id, id),
      KEY idx_notification_deliveries_due (next_attempt_at),
      KEY idx_notification_deliveries_created (created_at),
      CONSTRAINT fk_notification_deliveries_endpoint FOREIGN KEY (endpoint_id)
        REFERENCES notification_endpoints (id) ON DELETE CASCADE
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE notification_deliveries`);
    await q.query(`DROP TABLE notification_endpoints`);
  }
}
