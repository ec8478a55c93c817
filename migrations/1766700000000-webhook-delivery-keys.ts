import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A delivery is a duplicate when any of its identities was accepted before, not only the first in
 * the seed's order: `webhook_delivery_keys` keeps an accepted delivery's provider unsigned id
 * (`X-GitHub-Delivery`, Sentry `Request-ID`, the event id in the body) and its sender's
 * `X-Ambient-Delivery-Id` / `X-Warp-Delivery-Id` whenever they were sent, unique per webhook, and
 * goes with its entry (the foreign key on the entry's unique `(webhook_id, dedup_key)`). Entries
 * accepted before this migration keep their first identity only: their other ids were not stored.
 */
export class WebhookDeliveryKeys1766700000000 implements MigrationInterface {
  name = 'WebhookDeliveryKeys1766700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE webhook_delivery_keys (
      webhook_id VARCHAR(22) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
      dedup_key VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
      entry_dedup_key VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
      PRIMARY KEY (webhook_id, dedup_key),
      KEY idx_webhook_delivery_keys_entry (webhook_id, entry_dedup_key),
      CONSTRAINT fk_webhook_delivery_keys_entry FOREIGN KEY (webhook_id, entry_dedup_key)
        REFERENCES webhook_deliveries (webhook_id, dedup_key) ON DELETE CASCADE
    ) ENGINE=InnoDB`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE webhook_delivery_keys');
  }
}
