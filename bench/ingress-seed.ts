import { randomBytes, randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { newUid } from '../src/common/ids';
import { SecretCipher } from '../src/modules/secrets/secret-cipher';
import { githubSignature, standardWebhooksHeaders } from '../test/support/webhook-helpers';
import type { VariantsRecipe } from './load-generator';

export const TOKEN = 'bench-token-0123456789abcdefghijklmnop';
export const SW_SECRET = `whsec_${randomBytes(32).toString('base64')}`;
export const GITHUB_SECRET = randomBytes(32).toString('hex');

/**
 * `github`: signed over the body, its `X-GitHub-Delivery` unsigned, so every delivery also writes
 * that id's dedup key (the keyed path: the entry and its key in one packed transaction).
 */
export interface BenchWebhook {
  uid: string;
  mode: 'token' | 'standard_webhooks' | 'github';
}

const SECRETS: Record<BenchWebhook['mode'], string> = {
  token: TOKEN,
  standard_webhooks: SW_SECRET,
  github: GITHUB_SECRET,
};

/**
 * Seeds webhooks straight into MySQL (20 per factory, as a definition allows), so the bench can
 * spread its load over enough webhooks to stay under the 60-per-minute limit of each.
 */
export async function seedWebhooks(
  dataSource: DataSource,
  key: Buffer,
  count: number,
  mode: BenchWebhook['mode'],
) {
  const [{ id: teamId }] = (await dataSource.query(
    `SELECT id FROM teams WHERE name = 'default'`,
  )) as { id: string }[];
  const cipher = new SecretCipher({ secretsKey: key });
  const secret = cipher.encrypt(SECRETS[mode], teamId);
  const now = new Date();
  const hooks: BenchWebhook[] = [];
  for (let f = 0; f * 20 < count; f++) {
    const factoryId = newUid();
    await dataSource.query(
      `INSERT INTO factories (id, team_id, name, source, created_at, updated_at) VALUES (?, ?, ?, 'managed', ?, ?)`,
      [factoryId, teamId, `bench-${mode}-${f}`, now, now],
    );
    const rows = Array.from({ length: Math.min(20, count - f * 20) }, (_, i) => [
      newUid(),
      teamId,
      factoryId,
      `hook-${i}`,
      mode === 'token' ? 'token' : 'signature',
      mode === 'token' ? null : mode,
      'BENCH_SECRET',
      secret,
      1,
      now,
      now,
      now,
    ]);
    await dataSource.query(
      `INSERT INTO webhooks (id, team_id, factory_id, name, auth_mode, signature_scheme, secret_name,
         secret_ciphertext, enabled, secret_updated_at, created_at, updated_at) VALUES ?`,
      [rows],
    );
    hooks.push(...rows.map((r) => ({ uid: r[0] as string, mode })));
  }
  return hooks;
}

let sequence = 0;

/** A 1 KB JSON body, unique per call (no two deliveries are duplicates). */
export function uniqueBody(): string {
  const id = ++sequence;
  const base = {
    event: 'deploy.finished',
    id: `evt-${id}-${process.hrtime.bigint()}`,
    service: 'api',
    env: 'prod',
  };
  const padding = 1024 - JSON.stringify({ ...base, padding: '' }).length;
  return JSON.stringify({ ...base, padding: 'x'.repeat(Math.max(0, padding)) });
}

/**
 * `count` requests spread round-robin over the webhooks, each with its own body (and signature).
 * With `sendTo`, the same requests all go to that URL instead (the bare baseline's).
 */
export function deliveryRequests(
  ingressUrl: string,
  hooks: BenchWebhook[],
  count: number,
  offset = 0,
  swSecret = SW_SECRET,
  sendTo?: string,
  githubSecret = GITHUB_SECRET,
) {
  return Array.from({ length: count }, (_, i) => {
    const hook = hooks[(offset + i) % hooks.length];
    const body = uniqueBody();
    const headers: Record<string, string> =
      hook.mode === 'token'
        ? { authorization: `Bearer ${TOKEN}` }
        : hook.mode === 'github'
          ? {
              'x-hub-signature-256': githubSignature(githubSecret, body),
              'x-github-delivery': randomUUID(),
            }
          : standardWebhooksHeaders(swSecret, `msg_${offset + i}_${sequence}`, body);
    return {
      url: sendTo ?? `${ingressUrl}/webhooks/w/${hook.uid}`,
      method: 'POST' as const,
      headers: { ...headers, 'content-type': 'application/json' },
      body,
    };
  });
}

/** deliveryRequests(...), built in the load generator's thread (see LoadSpec.variantsFrom). */
export function deliveryRecipe(
  ingressUrl: string,
  hooks: BenchWebhook[],
  count: number,
  offset: number,
  sendTo?: string,
): VariantsRecipe {
  return {
    module: __filename,
    exportName: 'deliveryRequests',
    args: [ingressUrl, hooks, count, offset, SW_SECRET, sendTo, GITHUB_SECRET],
  };
}
