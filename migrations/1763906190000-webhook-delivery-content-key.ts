import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The replay guard's second dedup key: for signatures that cover no delivery id (GitHub, Stripe,
 * Sentry, PagerDuty, Vercel), an accepted delivery keeps the digest of its signed content, unique
 * per webhook, so a captured request re-sent with another unsigned id is a duplicate. NULL for
 * token modes and signed ids (many NULLs are allowed). Works on MySQL 8 and MariaDB 10.6+.
 */
export class WebhookDeliveryContentKey1763906190000 implements MigrationInterface {
  name = 'WebhookDeliveryContentKey1763906190000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_deliveries
      ADD COLUMN content_key VARCHAR(80) CHARACTER SET ascii COLLATE ascii_bin NULL AFTER dedup_key,
      ADD UNIQUE KEY uq_webhook_deliveries_content (webhook_id, content_key)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_deliveries
      DROP INDEX uq_webhook_deliveries_content, DROP COLUMN content_key`);
  }
}
