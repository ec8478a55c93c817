import { createHmac } from 'node:crypto';
import { DeliveryLog } from '../../src/modules/webhooks/delivery-log.repository';
import { useTestApp } from '../support/use-test-app';
import { waitFor } from '../support/wait';
import {
  createFactory,
  createWebhook,
  deliver,
  githubSignature,
  standardWebhooksHeaders,
  stripeSignature,
} from '../support/webhook-helpers';

const hex = (algorithm: string, key: string, data: string) =>
  createHmac(algorithm, key).update(data).digest('hex');

/** One signature scheme as an attacker who captured one signed delivery sees it. */
interface Scheme {
  name: string;
  scheme: string;
  /** The provider's secret (none: Ambient generates a whsec_ one). */
  providerSecret?: string;
  /**
   * The signed headers of a delivery of `body`, with `id` as its signed id, or as its provider's
   * unsigned id header where the scheme sends one (GitHub, Sentry).
   */
  sign(secret: string, body: string, signedId: string): Record<string, string>;
  /** Unsigned headers added to the captured request, one replay each. */
  replays: Record<string, string>[];
  /** A genuinely new delivery beside the captured one: a new signed id, or a new body. */
  fresh: 'signed_id' | 'body';
}

const REQUEST_IDS = ['r-2', 'r-3', 'r-4'].map((id) => ({ 'X-Request-Id': id }));

const SCHEMES: Scheme[] = [
  {
    name: 'standard-webhooks',
    scheme: 'standard_webhooks',
    sign: (secret, body, id) => standardWebhooksHeaders(secret, id, body),
    replays: [...REQUEST_IDS, { 'X-Ambient-Delivery-Id': 'amb-2' }],
    fresh: 'signed_id',
  },
  {
    name: 'svix',
    scheme: 'standard_webhooks',
    sign: (secret, body, id) => standardWebhooksHeaders(secret, id, body, undefined, 'svix'),
    replays: [
      { 'webhook-id': 'msg_unsigned_1' },
      {
        'webhook-id': 'msg_unsigned_2',
        'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
      },
      { 'webhook-id': 'msg_unsigned_3', 'X-Request-Id': 'r-5' },
    ],
    fresh: 'signed_id',
  },
  {
    name: 'stripe',
    scheme: 'stripe',
    providerSecret: 'whsec_stripe_replay_secret',
    sign: (secret, body) => ({ 'Stripe-Signature': stripeSignature(secret, body) }),
    replays: [...REQUEST_IDS, { 'X-Ambient-Delivery-Id': 'amb-2' }],
    fresh: 'body',
  },
  {
    name: 'github',
    scheme: 'github',
    providerSecret: 'gh-replay-secret',
    sign: (secret, body, id) => ({
      'X-Hub-Signature-256': githubSignature(secret, body),
      'X-GitHub-Delivery': `guid-${id}`,
    }),
    replays: [
      { 'X-GitHub-Delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0002' },
      { 'X-GitHub-Delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0003', 'X-Request-Id': 'r-2' },
      ...REQUEST_IDS,
    ],
    fresh: 'body',
  },
  {
    name: 'sentry',
    scheme: 'sentry',
    providerSecret: 'sentry-replay-secret',
    sign: (secret, body, id) => ({
      'Sentry-Hook-Signature': hex('sha256', secret, body),
      'Request-ID': `req-${id}`,
    }),
    replays: [{ 'Request-ID': 'req-2' }, ...REQUEST_IDS],
    fresh: 'body',
  },
  {
    name: 'pagerduty',
    scheme: 'pagerduty',
    providerSecret: 'pd-replay-secret',
    sign: (secret, body) => ({ 'X-PagerDuty-Signature': `v1=${hex('sha256', secret, body)}` }),
    replays: [...REQUEST_IDS, { 'X-Ambient-Delivery-Id': 'amb-2' }],
    fresh: 'body',
  },
  {
    name: 'vercel',
    scheme: 'vercel',
    providerSecret: 'vercel-replay-secret',
    sign: (secret, body) => ({ 'x-vercel-signature': hex('sha1', secret, body) }),
    replays: [...REQUEST_IDS, { 'X-Warp-Delivery-Id': 'warp-2' }],
    fresh: 'body',
  },
];

interface LogEntry {
  id: string;
  delivery_id: string;
  status: string;
  evaluated_at: string | null;
  runs: { automation: string; run_id: string | null; error: string | null }[];
}

/**
 * A captured signed delivery re-sent with other unsigned ids (the webhook's `delivery_id_header`,
 * an unsigned `webhook-id` beside signed `svix-*`, a new X-GitHub-Delivery, …) is a duplicate: one
 * accepted delivery, one run. A genuinely new delivery still starts one. And the seed's order
 * holds beside that: a delivery repeating an accepted configured id is a duplicate too.
 */
describe('security: replayed signed webhook deliveries (every scheme, real HTTP)', () => {
  let factory: string;
  const hooks = new Map<string, { uid: string; local: string; secret: string }>();

  const { app, api } = useTestApp('sec_replay', ['api', 'ingress', 'worker']);

  beforeAll(async () => {
    factory = await createFactory(api, 'Replay');
    for (const s of SCHEMES) {
      const created = await createWebhook(api, factory, {
        name: s.name,
        auth_mode: 'signature',
        signature_scheme: s.scheme,
        delivery_id_header: 'X-Request-Id',
        ...(s.providerSecret ? { provider_secret: s.providerSecret } : {}),
      });
      hooks.set(s.name, {
        uid: created.uid,
        local: `${app.ingressUrl}/webhooks/w/${created.uid}`,
        secret: s.providerSecret ?? created.secret!,
      });
    }
    // One automation on every webhook, so each accepted delivery starts exactly one run.
    const files = (await api.get(`/factory/${factory}/definition`)).body.files as object[];
    const uids = [...hooks.values()].map((h) => h.uid).join(', ');
    const automation = {
      path: 'automations/handle/automation.md',
      content: `---\nmodel: fake-model\ntriggers:\n  - provider: webhook\n    event: received\n    filter:\n      webhook_ids: [${uids}]\n---\nHandle the event.\n`,
    };
    const res = await api.put(`/factory/${factory}/definition`, {
      files: [...files, automation],
    });
    expect(res.status).toBe(200);
  });

  const log = async (uid: string) =>
    (await api.get(`/factory/${factory}/webhooks/${uid}/deliveries?limit=100`)).body
      .deliveries as LogEntry[];

  /** Waits until every accepted delivery of the webhook was evaluated, then counts its runs. */
  async function settled(uid: string) {
    const entries = await waitFor(
      () => log(uid),
      (all) => all.every((e) => e.status !== 'Accepted' || e.evaluated_at !== null),
      { what: `the accepted deliveries of ${uid} to be evaluated` },
    );
    const runs = (await api.get(`/agent/runs?metadata[webhook_uid]=${uid}&limit=100`)).body
      .runs as { run_id: string }[];
    return { entries, runs };
  }

  it.each(SCHEMES.map((s) => [s.name, s] as const))(
    '%s: the captured delivery replayed with other unsigned ids starts one run; a new delivery starts one more',
    async (name, s) => {
      const hook = hooks.get(name)!;
      const body = `{"id":"evt_${name}","event":{"id":"ev_${name}"},"action":"created"}`;
      const captured = { ...s.sign(hook.secret, body, `msg_${name}_1`), 'X-Request-Id': 'r-1' };
      const first = await deliver(hook.local, body, captured);
      expect(first.status).toBe(202);

      // Sequential replays, then the same again all at once (one INSERT batch).
      const replay = (extra: Record<string, string>) =>
        deliver(hook.local, body, { ...captured, ...extra });
      const sequential = [];
      for (const extra of s.replays) sequential.push(await replay(extra));
      const concurrent = await Promise.all(s.replays.map(replay));
      for (const res of [...sequential, ...concurrent]) expect(res.status).toBe(202);
      // The configured header names the delivery; the signature's key makes the replays duplicates.
      expect(first.body).toEqual({ delivery_id: 'r-1' });

      const replays = s.replays.length * 2;
      let entries = (await settled(hook.uid)).entries;
      expect(entries.filter((e) => e.status === 'Accepted')).toHaveLength(1);
      expect(entries.filter((e) => e.status === 'Duplicate')).toHaveLength(replays);

      // New content with new ids (a provider id in the body, as Stripe's, is one of its ids).
      const freshBody = `{"id":"evt_${name}_2","event":{"id":"ev_${name}_2"},"action":"resolved"}`;
      const fresh =
        s.fresh === 'signed_id'
          ? await deliver(hook.local, body, {
              ...s.sign(hook.secret, body, `msg_${name}_2`),
              'X-Request-Id': 'r-new',
            })
          : await deliver(hook.local, freshBody, {
              ...s.sign(hook.secret, freshBody, `msg_${name}_2`),
              'X-Request-Id': 'r-new',
            });
      expect(fresh.status).toBe(202);

      const after = await settled(hook.uid);
      entries = after.entries;
      const accepted = entries.filter((e) => e.status === 'Accepted');
      expect(accepted).toHaveLength(2);
      expect(entries.filter((e) => e.status === 'Duplicate')).toHaveLength(replays);
      for (const entry of accepted) {
        expect(entry.runs).toEqual([
          { automation: 'handle', run_id: expect.any(String), error: null, error_code: null },
        ]);
      }
      expect(after.runs.map((r) => r.run_id).sort()).toEqual(
        accepted.map((e) => e.runs[0].run_id).sort(),
      );
    },
  );

  it('sentry: a re-formatted replay of a compact-signed body is the same signed content', async () => {
    const hook = hooks.get('sentry')!;
    const payload = { action: 'assigned', data: { issue: { id: '77' } } };
    const compact = JSON.stringify(payload);
    // Sentry signs JSON.stringify(body); the verifier accepts any formatting of that JSON.
    const signature = { 'Sentry-Hook-Signature': hex('sha256', hook.secret, compact) };
    const sent = await deliver(hook.local, JSON.stringify(payload, null, 2), {
      ...signature,
      'Request-ID': 'req-a',
    });
    const reformatted = await deliver(hook.local, JSON.stringify(payload, null, 4), {
      ...signature,
      'Request-ID': 'req-b',
    });
    const exact = await deliver(hook.local, compact, { ...signature, 'Request-ID': 'req-c' });
    expect([sent.status, reformatted.status, exact.status]).toEqual([202, 202, 202]);
    const entries = (await settled(hook.uid)).entries.slice(0, 3);
    expect(entries.map((e) => [e.delivery_id, e.status])).toEqual([
      ['req-c', 'Duplicate'],
      ['req-b', 'Duplicate'],
      ['req-a', 'Accepted'],
    ]);
  });

  it('standard_webhooks: a sender retry (same signed id, new timestamp and signature) is a duplicate', async () => {
    const hook = hooks.get('standard-webhooks')!;
    const body = '{"type":"invoice.paid","n":2}';
    const earlier = Math.floor(Date.now() / 1000) - 60;
    const first = await deliver(hook.local, body, {
      ...standardWebhooksHeaders(hook.secret, 'msg_retry', body, earlier),
      'X-Request-Id': 'r-a',
    });
    const retry = await deliver(hook.local, body, {
      ...standardWebhooksHeaders(hook.secret, 'msg_retry', body),
      'X-Request-Id': 'r-b',
    });
    expect([first.body, retry.body]).toEqual([{ delivery_id: 'r-a' }, { delivery_id: 'r-b' }]);
    const entries = (await settled(hook.uid)).entries.slice(0, 2);
    expect(entries.map((e) => [e.delivery_id, e.status])).toEqual([
      ['r-b', 'Duplicate'],
      ['r-a', 'Accepted'],
    ]);
  });

  it.each(SCHEMES.map((s) => [s.name, s] as const))(
    '%s: the configured id comes first: a new signed delivery under an accepted configured id is a duplicate',
    async (name, s) => {
      const hook = hooks.get(name)!;
      const send = (n: number, requestId: string) => {
        const body = `{"id":"evt_seed_${name}_${n}","event":{"id":"ev_seed_${n}"},"n":${n}}`;
        return deliver(hook.local, body, {
          ...s.sign(hook.secret, body, `msg_seed_${name}_${n}`),
          'X-Request-Id': requestId,
        });
      };
      const sent = [
        await send(1, 'r-seed'),
        await send(2, 'r-seed'),
        await send(3, 'r-seed-other'),
      ];
      expect(sent.map((r) => r.body)).toEqual([
        { delivery_id: 'r-seed' },
        { delivery_id: 'r-seed' },
        { delivery_id: 'r-seed-other' },
      ]);
      const entries = (await settled(hook.uid)).entries.slice(0, 3);
      expect(entries.map((e) => [e.delivery_id, e.status])).toEqual([
        ['r-seed-other', 'Accepted'],
        ['r-seed', 'Duplicate'],
        ['r-seed', 'Accepted'],
      ]);
    },
  );

  it('github: the provider id is a key of its own, beside the configured id, in both directions', async () => {
    const hook = hooks.get('github')!;
    const send = (n: number, guid: string, requestId: string) => {
      const body = `{"action":"ids","n":${n}}`;
      return deliver(hook.local, body, {
        'X-Hub-Signature-256': githubSignature(hook.secret, body),
        'X-GitHub-Delivery': guid,
        'X-Request-Id': requestId,
      });
    };
    const sent = [
      await send(1, 'guid-ids-1', 'r-ids-1'),
      // New signed content under the accepted X-GitHub-Delivery, named by a new configured id.
      await send(2, 'guid-ids-1', 'r-ids-2'),
      // New signed content and a new X-GitHub-Delivery under the accepted configured id.
      await send(3, 'guid-ids-3', 'r-ids-1'),
      await send(4, 'guid-ids-4', 'r-ids-4'),
    ];
    expect(sent.map((r) => r.status)).toEqual([202, 202, 202, 202]);
    const entries = (await settled(hook.uid)).entries.slice(0, 4);
    expect(entries.map((e) => [e.delivery_id, e.status])).toEqual([
      ['r-ids-4', 'Accepted'],
      ['r-ids-1', 'Duplicate'],
      ['r-ids-2', 'Duplicate'],
      ['r-ids-1', 'Accepted'],
    ]);
  });

  it('token: the sender id is a key of its own, beside the configured id, in both directions', async () => {
    const created = await createWebhook(api, factory, {
      name: 'token-ids',
      auth_mode: 'token',
      delivery_id_header: 'X-Request-Id',
    });
    const local = `${app.ingressUrl}/webhooks/w/${created.uid}`;
    const send = (n: number, ids: Record<string, string>) =>
      deliver(local, `{"n":${n}}`, { Authorization: `Bearer ${created.secret}`, ...ids });
    const sent = [
      await send(1, { 'X-Request-Id': 't-1', 'X-Ambient-Delivery-Id': 'amb-1' }),
      // The accepted sender id alone: it names the delivery now.
      await send(2, { 'X-Ambient-Delivery-Id': 'amb-1' }),
      // The accepted sender id under a new configured id.
      await send(3, { 'X-Request-Id': 't-3', 'X-Ambient-Delivery-Id': 'amb-1' }),
      // The accepted configured id with a new sender id.
      await send(4, { 'X-Request-Id': 't-1', 'X-Ambient-Delivery-Id': 'amb-4' }),
      await send(5, { 'X-Request-Id': 't-5', 'X-Ambient-Delivery-Id': 'amb-5' }),
    ];
    expect(sent.map((r) => r.body)).toEqual([
      { delivery_id: 't-1' },
      { delivery_id: 'amb-1' },
      { delivery_id: 't-3' },
      { delivery_id: 't-1' },
      { delivery_id: 't-5' },
    ]);
    const entries = (await log(created.uid)).map((e) => [e.delivery_id, e.status]);
    expect(entries).toEqual([
      ['t-5', 'Accepted'],
      ['t-1', 'Duplicate'],
      ['t-3', 'Duplicate'],
      ['amb-1', 'Duplicate'],
      ['t-1', 'Accepted'],
    ]);
  });

  it('standard_webhooks without a configured header: the signed id names the delivery, a new one is accepted', async () => {
    const created = await createWebhook(api, factory, {
      name: 'standard-no-header',
      auth_mode: 'signature',
      signature_scheme: 'standard_webhooks',
    });
    const local = `${app.ingressUrl}/webhooks/w/${created.uid}`;
    const body = '{"type":"ping"}';
    const send = (id: string, extra: Record<string, string> = {}) =>
      deliver(local, body, { ...standardWebhooksHeaders(created.secret!, id, body), ...extra });
    const sent = [
      await send('msg_a'),
      await send('msg_a', { 'X-Ambient-Delivery-Id': 'amb-a' }),
      await send('msg_b'),
    ];
    expect(sent.map((r) => r.body)).toEqual([
      { delivery_id: 'msg_a' },
      { delivery_id: 'msg_a' },
      { delivery_id: 'msg_b' },
    ]);
    const entries = (await log(created.uid)).map((e) => [e.delivery_id, e.status]);
    expect(entries).toEqual([
      ['msg_b', 'Accepted'],
      ['msg_a', 'Duplicate'],
      ['msg_a', 'Accepted'],
    ]);
  });

  it('one INSERT batch applies both keys: a content repeat under a new id is a duplicate, and a duplicate reserves neither key', async () => {
    const hook = hooks.get('github')!;
    const at = new Date();
    const delivery = (deliveryId: string, contentKey: string) => ({
      webhookId: hook.uid,
      deliveryId,
      contentKey,
      body: Buffer.from('{}'),
      receivedAt: at,
    });
    const outcome = await app.ambient.app
      .get(DeliveryLog)
      .recordAcceptedMany([
        delivery('batch-1', 'signed-sha256:batch-a'),
        delivery('batch-2', 'signed-sha256:batch-a'),
        delivery('batch-2', 'signed-sha256:batch-b'),
        delivery('batch-3', 'signed-sha256:batch-b'),
      ]);
    expect(outcome).toEqual([false, true, false, true]);
    const rows = (await app.dataSource.query(
      `SELECT delivery_id, status FROM webhook_deliveries
        WHERE webhook_id = ? AND delivery_id LIKE 'batch-%' ORDER BY id`,
      [hook.uid],
    )) as { delivery_id: string; status: string }[];
    expect(rows.map((r) => [r.delivery_id, r.status])).toEqual([
      ['batch-1', 'accepted'],
      ['batch-2', 'duplicate'],
      ['batch-2', 'accepted'],
      ['batch-3', 'duplicate'],
    ]);
  });
});
