import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Team secrets (encrypted values), factories with their applied definition files, webhooks,
 * automations and the webhook delivery log. Works on MySQL 8 and MariaDB 10.6+.
 */
export class WebhooksFactories1763810000000 implements MigrationInterface {
  name = 'WebhooksFactories1763810000000';

  async up(q: QueryRunner): Promise<void> {
    const id = (n: number) => `VARCHAR(${n}) CHARACTER SET ascii COLLATE ascii_bin`;
    const table = 'ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci';

    await q.query(`CREATE TABLE team_secrets (
      id ${id(22)} NOT NULL PRIMARY KEY,
      team_id ${id(22)} NOT NULL,
      name ${id(128)} NOT NULL,
      description VARCHAR(512) NULL,
      ciphertext MEDIUMBLOB NOT NULL,
      created_by ${id(22)} NULL,
      created_at DATETIME(3) NOT NULL,
      updated_at DATETIME(3) NOT NULL,
      UNIQUE KEY uq_team_secrets_name (team_id, name),
      CONSTRAINT fk_team_secrets_team FOREIGN KEY (team_id) REFERENCES teams (id) ON DELETE CASCADE
    ) ${table}`);

    await q.query(`CREATE TABLE factories (
      id ${id(22)} NOT NULL PRIMARY KEY,
      team_id ${id(22)} NOT NULL,
      name VARCHAR(255) NOT NULL,
      description TEXT NULL,
      source VARCHAR(16) CHARACTER SET ascii NOT NULL,
      repository_url VARCHAR(1024) NULL,
      repository_branch VARCHAR(255) NULL,
      repository_path VARCHAR(512) NULL,
      settings JSON NULL,
      applied_commit ${id(64)} NULL,
      applied_at DATETIME(3) NULL,
      last_sync JSON NULL,
      sync_lock_until DATETIME(3) NULL,
      created_by ${id(22)} NULL,
      created_at DATETIME(3) NOT NULL,
      updated_at DATETIME(3) NOT NULL,
      deleted_at DATETIME(3) NULL,
      KEY idx_factories_team (team_id, created_at, id),
      KEY idx_factories_source (source, deleted_at),
      CONSTRAINT fk_factories_team FOREIGN KEY (team_id) REFERENCES teams (id) ON DELETE CASCADE
    ) ${table}`);

    await q.query(`CREATE TABLE factory_files (
      factory_id ${id(22)} NOT NULL,
      path VARCHAR(512) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
      content MEDIUMTEXT NOT NULL,
      PRIMARY KEY (factory_id, path),
      CONSTRAINT fk_factory_files_factory FOREIGN KEY (factory_id) REFERENCES factories (id) ON DELETE CASCADE
    ) ${table}`);

    await q.query(`CREATE TABLE webhooks (
      id ${id(22)} NOT NULL PRIMARY KEY,
      team_id ${id(22)} NOT NULL,
      factory_id ${id(22)} NOT NULL,
      name VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
      auth_mode VARCHAR(16) CHARACTER SET ascii NOT NULL,
      signature_scheme VARCHAR(32) CHARACTER SET ascii NULL,
      secret_name ${id(128)} NOT NULL,
      secret_ciphertext BLOB NOT NULL,
      delivery_id_header VARCHAR(128) CHARACTER SET ascii NULL,
      enabled TINYINT(1) NOT NULL,
      secret_updated_at DATETIME(3) NOT NULL,
      created_at DATETIME(3) NOT NULL,
      updated_at DATETIME(3) NOT NULL,
      deleted_at DATETIME(3) NULL,
      KEY idx_webhooks_factory (factory_id, deleted_at),
      KEY idx_webhooks_team (team_id),
      CONSTRAINT fk_webhooks_factory FOREIGN KEY (factory_id) REFERENCES factories (id) ON DELETE CASCADE
    ) ${table}`);

    // The delivery log doubles as the dedup memory: an accepted row carries its identity in
    // dedup_key, whose unique key lets exactly one of several identical deliveries in.
    await q.query(`CREATE TABLE webhook_deliveries (
      id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
      webhook_id ${id(22)} NOT NULL,
      delivery_id ${id(255)} NULL,
      dedup_key ${id(255)} NULL,
      status VARCHAR(24) CHARACTER SET ascii NOT NULL,
      size_bytes INT NOT NULL,
      received_at DATETIME(3) NOT NULL,
      payload MEDIUMBLOB NULL,
      evaluation_due_at DATETIME(3) NULL,
      evaluated_at DATETIME(3) NULL,
      UNIQUE KEY uq_webhook_deliveries_dedup (webhook_id, dedup_key),
      KEY idx_webhook_deliveries_log (webhook_id, id),
      KEY idx_webhook_deliveries_due (evaluation_due_at),
      KEY idx_webhook_deliveries_received (received_at),
      CONSTRAINT fk_webhook_deliveries_webhook FOREIGN KEY (webhook_id) REFERENCES webhooks (id) ON DELETE CASCADE
    ) ${table}`);

    await q.query(`CREATE TABLE automations (
      id ${id(22)} NOT NULL PRIMARY KEY,
      team_id ${id(22)} NOT NULL,
      factory_id ${id(22)} NOT NULL,
      name VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
      enabled TINYINT(1) NOT NULL,
      agent VARCHAR(128) NULL,
      prompt MEDIUMTEXT NOT NULL,
      triggers JSON NOT NULL,
      execution JSON NOT NULL,
      created_at DATETIME(3) NOT NULL,
      updated_at DATETIME(3) NOT NULL,
      UNIQUE KEY uq_automations_name (factory_id, name),
      CONSTRAINT fk_automations_factory FOREIGN KEY (factory_id) REFERENCES factories (id) ON DELETE CASCADE
    ) ${table}`);

    // Which automations a webhook's deliveries may start; no foreign key to webhooks, because an
    // automation keeps selecting a deleted webhook (it just never fires).
    await q.query(`CREATE TABLE automation_webhook_triggers (
      webhook_id ${id(22)} NOT NULL,
      automation_id ${id(22)} NOT NULL,
      PRIMARY KEY (webhook_id, automation_id),
      KEY idx_automation_webhook_triggers_automation (automation_id),
      CONSTRAINT fk_awt_automation FOREIGN KEY (automation_id) REFERENCES automations (id) ON DELETE CASCADE
    ) ${table}`);

    // One row per (delivery, automation) evaluated: the run it started or why it could not.
    // Its primary key makes a re-evaluated delivery start nothing twice.
    await q.query(`CREATE TABLE webhook_delivery_runs (
      delivery_entry_id BIGINT NOT NULL,
      automation_id ${id(22)} NOT NULL,
      run_id ${id(36)} NULL,
      error VARCHAR(1024) NULL,
      created_at DATETIME(3) NOT NULL,
      PRIMARY KEY (delivery_entry_id, automation_id),
      CONSTRAINT fk_wdr_delivery FOREIGN KEY (delivery_entry_id) REFERENCES webhook_deliveries (id) ON DELETE CASCADE
    ) ${table}`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const name of [
      'webhook_delivery_runs',
      'automation_webhook_triggers',
      'automations',
      'webhook_deliveries',
      'webhooks',
      'factory_files',
      'factories',
      'team_secrets',
    ]) {
      await q.query(`DROP TABLE IF EXISTS ${name}`);
    }
  }
}
