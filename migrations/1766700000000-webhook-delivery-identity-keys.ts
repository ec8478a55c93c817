import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A delivery is a duplicate when any of its identities was accepted before, not only the first
 * in the seed's order: an accepted entry also keeps the provider's unsigned id (`X-GitHub-Delivery`,
 * Sentry `Request-ID`, the event id in the body) and the sender's `X-Ambient-Delivery-Id` /
 * `X-Warp-Delivery-Id` whenever they were sent, each unique per webhook (many NULLs are allowed).
 * Entries accepted before this migration keep only their first identity: their other ids were not
 * stored, so a replay naming one of those alone is accepted once more.
 */
export class WebhookDeliveryIdentityKeys1766700000000 implements MigrationInterface {
  name = 'WebhookDeliveryIdentityKeys1766700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_deliveries
      ADD COLUMN provider_key VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NULL AFTER content_key,
      ADD COLUMN sender_key VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NULL AFTER provider_key,
      ADD UNIQUE KEY uq_webhook_deliveries_provider (webhook_id, provider_key),
      ADD UNIQUE KEY uq_webhook_deliveries_sender (webhook_id, sender_key)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_deliveries
      DROP INDEX uq_webhook_deliveries_sender, DROP INDEX uq_webhook_deliveries_provider,
      DROP COLUMN sender_key, DROP COLUMN provider_key`);
  }
}
