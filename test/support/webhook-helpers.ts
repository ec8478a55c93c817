import { createHmac } from 'node:crypto';
import { apiClient } from './api-client';

type Api = ReturnType<typeof apiClient>;

/** A managed factory, created through the API. */
export async function createFactory(api: Api, name = 'Ops'): Promise<string> {
  const res = await api.post('/factory', { name });
  if (res.status !== 201) throw new Error(`factory: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.uid as string;
}

export interface CreatedWebhook {
  uid: string;
  url: string;
  secret: string | null;
  name: string;
  secret_name: string;
}

export async function createWebhook(
  api: Api,
  factoryUid: string,
  body: Record<string, unknown>,
): Promise<CreatedWebhook> {
  const res = await api.post(`/factory/${factoryUid}/webhooks`, body);
  if (res.status !== 201) throw new Error(`webhook: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as CreatedWebhook;
}

export interface Delivery {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

/** POSTs a delivery to the ingress over real HTTP. */
export async function deliver(
  url: string,
  body: string | Buffer,
  headers: Record<string, string> = {},
  method = 'POST',
): Promise<Delivery> {
  const res = await fetch(url, {
    method,
    headers,
    body: method === 'GET' || method === 'HEAD' ? undefined : body,
  });
  const text = await res.text();
  let parsed: Record<string, unknown> = {};
  try {
    parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    parsed = { text };
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

/** Standard Webhooks headers for a body, signed as the spec says (svix-* with brand 'svix'). */
export function standardWebhooksHeaders(
  secret: string,
  id: string,
  body: string,
  timestamp = Math.floor(Date.now() / 1000),
  brand: 'webhook' | 'svix' = 'webhook',
): Record<string, string> {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const signature = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
  return {
    [`${brand}-id`]: id,
    [`${brand}-timestamp`]: String(timestamp),
    [`${brand}-signature`]: `v1,${signature}`,
  };
}

export function githubSignature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

export function stripeSignature(
  secret: string,
  body: string,
  t = Math.floor(Date.now() / 1000),
): string {
  return `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`;
}

/** A factory.yaml + webhook + automation definition for PUT /factory/{uid}/definition. */
export function definitionFiles(files: Record<string, string>, name = 'Ops') {
  return {
    files: Object.entries({
      'factory.yaml': `schemaVersion: v1alpha1\nname: ${name}\n`,
      ...files,
    }).map(([path, content]) => ({ path, content })),
  };
}
