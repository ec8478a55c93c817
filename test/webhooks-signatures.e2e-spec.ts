import { createHmac } from 'node:crypto';
import { useTestApp } from './support/use-test-app';
import {
  createFactory,
  createWebhook,
  deliver,
  githubSignature,
  standardWebhooksHeaders,
  stripeSignature,
} from './support/webhook-helpers';

const hmacHex = (algo: string, key: string, data: string) =>
  createHmac(algo, key).update(data).digest('hex');

/** Signature mode over real HTTP, one webhook per provider scheme. */
describe('signed webhooks (every scheme, real HTTP)', () => {
  let factory: string;

  const { app, api } = useTestApp('wh_signatures', ['api', 'ingress'], {}, { model: false });

  beforeAll(async () => {
    factory = await createFactory(api, 'Signed');
  });

  async function signed(name: string, scheme: string, providerSecret?: string) {
    const hook = await createWebhook(api, factory, {
      name,
      auth_mode: 'signature',
      signature_scheme: scheme,
      ...(providerSecret ? { provider_secret: providerSecret } : {}),
    });
    return { ...hook, local: `${app.ingressUrl}/webhooks/w/${hook.uid}` };
  }

  it('standard_webhooks: generates a whsec_ secret; webhook-* and svix-* signatures verify; webhook-id is the delivery id', async () => {
    const hook = await signed('sw', 'standard_webhooks');
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    const body = '{"type":"invoice.paid"}';
    const res = await deliver(
      hook.local,
      body,
      standardWebhooksHeaders(hook.secret!, 'msg_1', body),
    );
    expect(res).toMatchObject({ status: 202, body: { delivery_id: 'msg_1' } });
    const svix = await deliver(
      hook.local,
      body,
      standardWebhooksHeaders(hook.secret!, 'msg_2', body, undefined, 'svix'),
    );
    expect(svix).toMatchObject({ status: 202, body: { delivery_id: 'msg_2' } });
    const retry = await deliver(
      hook.local,
      body,
      standardWebhooksHeaders(hook.secret!, 'msg_1', body),
    );
    expect(retry.status).toBe(202);
    const old = Math.floor(Date.now() / 1000) - 6 * 60;
    expect(
      (await deliver(hook.local, body, standardWebhooksHeaders(hook.secret!, 'msg_3', body, old)))
        .status,
    ).toBe(401);
    expect((await deliver(hook.local, body, { 'webhook-id': 'msg_4' })).status).toBe(401);
    const tampered = standardWebhooksHeaders(hook.secret!, 'msg_5', body);
    expect((await deliver(hook.local, '{"type":"invoice.unpaid"}', tampered)).status).toBe(401);
    const log = await api.get(`/factory/${factory}/webhooks/${hook.uid}/deliveries`);
    expect(log.body.deliveries.map((d: { status: string }) => d.status)).toEqual([
      'Rejected (auth)',
      'Rejected (auth)',
      'Rejected (auth)',
      'Duplicate',
      'Accepted',
      'Accepted',
    ]);
  });

  it('standard_webhooks rotation: signatures with the old secret fail at once', async () => {
    const hook = await signed('sw-rotate', 'standard_webhooks');
    const rotated = (await api.post(`/factory/${factory}/webhooks/${hook.uid}/rotate-secret`)).body;
    expect(rotated.secret).toMatch(/^whsec_/);
    const body = '{"n":1}';
    expect(
      (await deliver(hook.local, body, standardWebhooksHeaders(hook.secret!, 'r1', body))).status,
    ).toBe(401);
    expect(
      (await deliver(hook.local, body, standardWebhooksHeaders(rotated.secret, 'r2', body))).status,
    ).toBe(202);
  });

  it('stripe: t/v1 signature, 5-minute window, the event id is the delivery id', async () => {
    const secret = 'whsec_stripe_test_secret_value';
    const hook = await signed('stripe', 'stripe', secret);
    expect(hook.secret).toBeNull();
    const body = '{"id":"evt_123","type":"charge.succeeded"}';
    const res = await deliver(hook.local, body, {
      'Stripe-Signature': stripeSignature(secret, body),
    });
    expect(res).toMatchObject({ status: 202, body: { delivery_id: 'evt_123' } });
    const stale = stripeSignature(secret, body, Math.floor(Date.now() / 1000) - 301);
    expect((await deliver(hook.local, body, { 'Stripe-Signature': stale })).status).toBe(401);
    expect((await deliver(hook.local, body)).status).toBe(401);
  });

  it('github: X-Hub-Signature-256, X-GitHub-Delivery as identity; its secret cannot be rotated here', async () => {
    const secret = 'gh-webhook-secret';
    const hook = await signed('github', 'github', secret);
    const body = '{"action":"opened","number":7}';
    const headers = {
      'X-Hub-Signature-256': githubSignature(secret, body),
      'X-GitHub-Delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958',
    };
    expect((await deliver(hook.local, body, headers)).body).toEqual({
      delivery_id: '72d3162e-cc78-11e3-81ab-4c9367dc0958',
    });
    expect(
      (await deliver(hook.local, body, { 'X-Hub-Signature-256': githubSignature('wrong', body) }))
        .status,
    ).toBe(401);
    const rotate = await api.post(`/factory/${factory}/webhooks/${hook.uid}/rotate-secret`);
    expect(rotate.status).toBe(422);
    expect(rotate.body.detail).toContain('PUT /secrets/');
  });

  it('sentry, pagerduty and vercel verify their documented signatures', async () => {
    const body = '{"id":"evt_v","event":{"id":"PD1"},"action":"created"}';
    const sentry = await signed('sentry', 'sentry', 'sentry-secret');
    const s = await deliver(sentry.local, body, {
      'Sentry-Hook-Signature': hmacHex('sha256', 'sentry-secret', body),
      'Request-ID': 'req-1',
    });
    expect(s).toMatchObject({ status: 202, body: { delivery_id: 'req-1' } });
    const pd = await signed('pagerduty', 'pagerduty', 'pd-secret');
    const p = await deliver(pd.local, body, {
      'X-PagerDuty-Signature': `v1=${hmacHex('sha256', 'pd-secret', body)}`,
    });
    expect(p).toMatchObject({ status: 202, body: { delivery_id: 'PD1' } });
    const vercel = await signed('vercel', 'vercel', 'vercel-secret');
    const v = await deliver(vercel.local, body, {
      'x-vercel-signature': hmacHex('sha1', 'vercel-secret', body),
    });
    expect(v).toMatchObject({ status: 202, body: { delivery_id: 'evt_v' } });
    for (const hook of [sentry, pd, vercel])
      expect((await deliver(hook.local, body)).status).toBe(401);
  });

  it('a provider-issued secret left blank: created disabled (404) until the secret is set and the webhook enabled', async () => {
    const hook = await signed('vercel-later', 'vercel');
    expect(hook).toMatchObject({ secret: null, enabled: false });
    const body = '{"id":"later"}';
    const sig = { 'x-vercel-signature': hmacHex('sha1', 'real-vercel-secret', body) };
    expect((await deliver(hook.local, body, sig)).status).toBe(404);
    expect(
      (await api.put(`/secrets/${hook.secret_name}`, { value: 'real-vercel-secret' })).status,
    ).toBe(200);
    expect((await api.post(`/factory/${factory}/webhooks/${hook.uid}/enable`)).status).toBe(200);
    expect((await deliver(hook.local, body, sig)).status).toBe(202);
  });
});
