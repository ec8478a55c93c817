import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Redelivery: a log entry made by redelivering a stored delivery names the entry it redelivered.
 * No foreign key: the log's housekeeping may delete the original before its redeliveries, and the
 * link then stays as history.
 */
export class WebhookRedeliveries1764400000000 implements MigrationInterface {
  name = 'WebhookRedeliveries1764400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_deliveries
      ADD COLUMN redelivery_of BIGINT NULL AFTER content_key,
      ADD KEY idx_webhook_deliveries_redelivery_of (redelivery_of)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_deliveries
      DROP INDEX idx_webhook_deliveries_redelivery_of, DROP COLUMN redelivery_of`);
  }
}
