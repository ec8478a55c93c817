import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';

export interface WebhookRows {
  factoryId: string;
  webhookId: string;
}

const uid = () => randomBytes(11).toString('hex');

/** Inserts a factory "Deploys" and its enabled token-mode webhook "ci", as the API leaves them. */
export async function insertWebhook(dataSource: DataSource, teamId: string): Promise<WebhookRows> {
  const factoryId = uid();
  const webhookId = uid();
  const now = new Date();
  await dataSource.query(
    `INSERT INTO factories (id, team_id, name, source, created_at, updated_at)
     VALUES (?, ?, 'Deploys', 'api', ?, ?)`,
    [factoryId, teamId, now, now],
  );
  await dataSource.query(
    `INSERT INTO webhooks (id, team_id, factory_id, name, auth_mode, secret_name,
       secret_ciphertext, enabled, secret_updated_at, created_at, updated_at)
     VALUES (?, ?, ?, 'ci', 'token', 'S', '', 1, ?, ?, ?)`,
    [webhookId, teamId, factoryId, now, now, now],
  );
  return { factoryId, webhookId };
}
