import { createHmac, randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { SignedRequest } from './index';
import { BUILTIN_REGISTRY, builtinVerifier } from './builtin-verifiers.fixture';

const NOW_MS = Date.UTC(2026, 4, 1, 12, 0, 0);
const nowSeconds = Math.floor(NOW_MS / 1000);

function request(
  body: string,
  headers: Record<string, string>,
  secret: string,
  nowMs = NOW_MS,
): SignedRequest {
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  return { body: Buffer.from(body), header: (n) => lower[n.toLowerCase()], secret, nowMs };
}

const hmac = (algo: string, key: string | Buffer, data: string, enc: 'hex' | 'base64' = 'hex') =>
  createHmac(algo, key).update(data).digest(enc);

describe("standard_webhooks verifier (the reference library's rules)", () => {
  const v = builtinVerifier('standard_webhooks');
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const key = Buffer.from(secret.slice(6), 'base64');
  // Made the way the Standard Webhooks spec says: base64 HMAC-SHA256 of "id.timestamp.body".
  const sign = (id: string, ts: number, body: string, k = key) =>
    `v1,${hmac('sha256', k, `${id}.${ts}.${body}`, 'base64')}`;
  const body = '{"type":"invoice.paid","data":{"id":42}}';

  it("verifies the spec's published test vector", () => {
    const result = v.verify(
      request(
        '{"test": 2432232314}',
        {
          'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
          'webhook-timestamp': '1614265330',
          'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
        },
        'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        1614265330 * 1000,
      ),
    );
    expect(result).toMatchObject({ ok: true, signed: { id: 'msg_p5jXN8AQM9LWM0D4loKWxJek' } });
  });

  it('accepts what the reference library signs, also non-ASCII and invalid UTF-8 bodies', () => {
    for (const raw of [Buffer.from('{"name":"Zoë 🚀"}'), Buffer.from([0x7b, 0xff, 0xfe, 0x7d])]) {
      const headers: Record<string, string> = {
        'webhook-id': 'msg_u',
        'webhook-timestamp': String(nowSeconds),
        'webhook-signature': new Webhook(secret).sign('msg_u', new Date(NOW_MS), raw),
      };
      const signed = { body: raw, header: (n: string) => headers[n], secret, nowMs: NOW_MS };
      expect(v.verify(signed).ok).toBe(true);
      headers['webhook-signature'] = new Webhook(secret).sign('msg_v', new Date(NOW_MS), raw);
      expect(v.verify(signed).ok).toBe(false);
    }
  });

  it('decides as the reference library does, odd timestamps, versions and bodies included', () => {
    const library = new Webhook(secret);
    const id = 'msg_odd';
    const cases: { timestamp: string; signature: (raw: Buffer) => string; body: Buffer }[] = [];
    const bodies = [Buffer.from(body), Buffer.from([0x7b, 0xff, 0x7d]), Buffer.alloc(0)];
    const signedAs = (ts: number) => (raw: Buffer) => library.sign(id, new Date(ts * 1000), raw);
    for (const raw of bodies) {
      for (const timestamp of [
        String(nowSeconds),
        ` ${nowSeconds}`,
        `${nowSeconds}abc`,
        `0${nowSeconds}`,
        String(nowSeconds - 299),
        String(nowSeconds + 301),
        'soon',
      ]) {
        cases.push({ timestamp, body: raw, signature: signedAs(nowSeconds) });
        cases.push({
          timestamp,
          body: raw,
          signature: (b) => `v2,x ${signedAs(nowSeconds - 299)(b)}`,
        });
      }
      cases.push({ timestamp: String(nowSeconds), body: raw, signature: () => '' });
      cases.push({ timestamp: String(nowSeconds), body: raw, signature: () => 'v1' });
      cases.push({
        timestamp: String(nowSeconds),
        body: raw,
        signature: (b) => signedAs(nowSeconds)(b).slice(0, -2),
      });
    }
    const now = jest.spyOn(Date, 'now').mockReturnValue(NOW_MS);
    try {
      for (const c of cases) {
        const headers: Record<string, string> = {
          'webhook-id': id,
          'webhook-timestamp': c.timestamp,
          'webhook-signature': c.signature(c.body),
        };
        let libraryAccepts = true;
        try {
          library.verify(c.body, headers, { jsonParse: false });
        } catch {
          libraryAccepts = false;
        }
        const ours = v.verify({ body: c.body, header: (n) => headers[n], secret, nowMs: NOW_MS });
        const seen = { ...headers, body: c.body.toString('hex') };
        expect({ ...seen, ok: ours.ok }).toEqual({ ...seen, ok: libraryAccepts });
      }
    } finally {
      now.mockRestore();
    }
  });

  it('accepts webhook-* and svix-* headers, and any of several signatures (rotation)', () => {
    const sig = sign('msg_1', nowSeconds, body);
    const headers = (brand: string, signature: string) => ({
      [`${brand}-id`]: 'msg_1',
      [`${brand}-timestamp`]: String(nowSeconds),
      [`${brand}-signature`]: signature,
    });
    expect(v.verify(request(body, headers('webhook', sig), secret))).toMatchObject({
      ok: true,
      signed: { id: 'msg_1' },
    });
    expect(v.verify(request(body, headers('svix', sig), secret))).toMatchObject({
      ok: true,
      signed: { id: 'msg_1' },
    });
    const old = sign('msg_1', nowSeconds, body, randomBytes(32));
    expect(v.verify(request(body, headers('webhook', `${old} ${sig}`), secret)).ok).toBe(true);
    expect(v.deliveryId).toBeUndefined();
  });

  it('vouches for the id of the header set it verified, never an unsigned id beside it', () => {
    const sig = sign('msg_1', nowSeconds, body);
    const svix = {
      'svix-id': 'msg_1',
      'svix-timestamp': String(nowSeconds),
      'svix-signature': sig,
    };
    const result = v.verify(request(body, { ...svix, 'webhook-id': 'msg_unsigned' }, secret));
    expect(result).toEqual({
      ok: true,
      signed: { id: 'msg_1', content: Buffer.from(`msg_1.${nowSeconds}.${body}`) },
    });
    const forged = { ...svix, 'webhook-id': 'x', 'webhook-timestamp': String(nowSeconds) };
    const both = v.verify(request(body, { ...forged, 'webhook-signature': 'v1,AAAA' }, secret));
    expect(both.ok).toBe(false);
  });

  it.each([
    ['older than five minutes', nowSeconds - 301, /too old/],
    ['more than five minutes ahead', nowSeconds + 301, /too new/],
  ])('refuses a signature %s', (_what, ts, reason) => {
    const headers = {
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(ts),
      'webhook-signature': sign('msg_1', ts, body),
    };
    const result = v.verify(request(body, headers, secret));
    expect(result.ok).toBe(false);
    expect(!result.ok && result.reason).toMatch(reason);
  });

  it('refuses a tampered body, a wrong secret and an unsigned request', () => {
    const headers = {
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(nowSeconds),
      'webhook-signature': sign('msg_1', nowSeconds, body),
    };
    expect(v.verify(request(`${body} `, headers, secret)).ok).toBe(false);
    const other = `whsec_${randomBytes(32).toString('base64')}`;
    expect(v.verify(request(body, headers, other)).ok).toBe(false);
    const unsigned = v.verify(request(body, { 'webhook-id': 'msg_1' }, secret));
    expect(!unsigned.ok && unsigned.reason).toMatch(/unsigned/);
  });

  it('checks secrets: whsec_ + base64 of 24-64 bytes', () => {
    expect(v.checkSecret(secret)).toBeNull();
    expect(v.checkSecret(`whsec_${randomBytes(8).toString('base64')}`)).toMatch(/24-64 bytes/);
    expect(v.checkSecret('whsec_not base64!')).toMatch(/base64/);
  });
});

describe('stripe verifier', () => {
  const v = builtinVerifier('stripe');
  const secret = 'whsec_test_stripe_secret';
  const body = '{"id":"evt_1","type":"payment_intent.succeeded"}';
  // Stripe's documented scheme: hex HMAC-SHA256 of "t.body", keyed with the endpoint secret.
  const header = (t: number, ...keys: string[]) =>
    `t=${t},${keys.map((k) => `v1=${hmac('sha256', k, `${t}.${body}`)}`).join(',')},v0=deadbeef`;

  it('verifies, also with several v1 signatures, and takes the event id as delivery id', () => {
    expect(
      v.verify(request(body, { 'Stripe-Signature': header(nowSeconds, secret) }, secret)),
    ).toEqual({ ok: true, signed: { content: Buffer.from(`${nowSeconds}.${body}`) } });
    const rotated = header(nowSeconds, 'whsec_old', secret);
    expect(v.verify(request(body, { 'Stripe-Signature': rotated }, secret)).ok).toBe(true);
    expect(v.deliveryId!(() => undefined, JSON.parse(body))).toBe('evt_1');
  });

  it('refuses timestamps more than five minutes old, wrong secrets, and unsigned requests', () => {
    const old = v.verify(
      request(body, { 'Stripe-Signature': header(nowSeconds - 301, secret) }, secret),
    );
    expect(!old.ok && old.reason).toMatch(/301 s away/);
    expect(
      v.verify(request(body, { 'Stripe-Signature': header(nowSeconds, 'other') }, secret)).ok,
    ).toBe(false);
    expect(v.verify(request(body, {}, secret)).ok).toBe(false);
    expect(v.verify(request(body, { 'Stripe-Signature': 'v1=abc' }, secret)).ok).toBe(false);
  });
});

describe('github verifier', () => {
  const v = builtinVerifier('github');

  it("verifies GitHub's documented example signature", () => {
    const result = v.verify(
      request(
        'Hello, World!',
        {
          'X-Hub-Signature-256':
            'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17',
        },
        "It's a Secret to Everybody",
      ),
    );
    expect(result).toEqual({ ok: true, signed: { content: Buffer.from('Hello, World!') } });
  });

  it('refuses a wrong signature, the legacy SHA-1 header alone and unsigned requests', () => {
    const body = '{"action":"opened"}';
    const wrong = `sha256=${hmac('sha256', 'other', body)}`;
    expect(v.verify(request(body, { 'X-Hub-Signature-256': wrong }, 's')).ok).toBe(false);
    const sha1 = `sha1=${hmac('sha1', 's', body)}`;
    expect(v.verify(request(body, { 'X-Hub-Signature': sha1 }, 's')).ok).toBe(false);
    expect(v.verify(request(body, {}, 's')).ok).toBe(false);
    expect(
      v.deliveryId!((n) => ({ 'x-github-delivery': 'guid-1' })[n as 'x-github-delivery'], null),
    ).toBe('guid-1');
  });
});

describe('sentry verifier', () => {
  const v = builtinVerifier('sentry');
  const secret = 'sentry-client-secret';

  it('verifies the hex HMAC-SHA256 Sentry computes over JSON.stringify(body)', () => {
    const payload = { action: 'created', data: { issue: { id: '1' } } };
    const body = JSON.stringify(payload);
    const signature = hmac('sha256', secret, JSON.stringify(payload));
    const signed = { ok: true, signed: { content: Buffer.from(body) } };
    expect(v.verify(request(body, { 'Sentry-Hook-Signature': signature }, secret))).toEqual(signed);
    // A pretty-printed body still verifies against Sentry's compact serialisation, which is
    // then what the signature covers (so a re-formatted replay has the same signed content).
    const pretty = JSON.stringify(payload, null, 2);
    expect(v.verify(request(pretty, { 'Sentry-Hook-Signature': signature }, secret))).toEqual(
      signed,
    );
    expect(v.deliveryId!((n) => ({ 'request-id': 'req-7' })[n as 'request-id'], null)).toBe(
      'req-7',
    );
  });

  it('refuses a wrong signature and unsigned requests', () => {
    const body = '{"a":1}';
    expect(
      v.verify(request(body, { 'Sentry-Hook-Signature': hmac('sha256', 'x', body) }, secret)).ok,
    ).toBe(false);
    expect(v.verify(request(body, {}, secret)).ok).toBe(false);
  });
});

describe('pagerduty verifier', () => {
  const v = builtinVerifier('pagerduty');
  const secret = 'pd-secret';
  const body = '{"event":{"id":"01DEN","event_type":"incident.triggered"}}';

  it('verifies v1 signatures, one of several during rotation, and reads event.id', () => {
    const sig = `v1=${hmac('sha256', secret, body)}`;
    expect(v.verify(request(body, { 'X-PagerDuty-Signature': sig }, secret))).toEqual({
      ok: true,
      signed: { content: Buffer.from(body) },
    });
    const rotated = `v1=${hmac('sha256', 'old', body)},${sig}`;
    expect(v.verify(request(body, { 'X-PagerDuty-Signature': rotated }, secret)).ok).toBe(true);
    expect(v.deliveryId!(() => undefined, JSON.parse(body))).toBe('01DEN');
  });

  it('refuses a wrong signature and unsigned requests', () => {
    const wrong = `v1=${hmac('sha256', 'other', body)}`;
    expect(v.verify(request(body, { 'X-PagerDuty-Signature': wrong }, secret)).ok).toBe(false);
    expect(v.verify(request(body, {}, secret)).ok).toBe(false);
  });
});

describe('vercel verifier', () => {
  const v = builtinVerifier('vercel');
  const secret = 'vercel-secret';
  const body = '{"id":"evt_v1","type":"deployment.succeeded"}';

  it('verifies the hex HMAC-SHA1 of the body and reads id', () => {
    const sig = hmac('sha1', secret, body);
    expect(v.verify(request(body, { 'x-vercel-signature': sig }, secret))).toEqual({
      ok: true,
      signed: { content: Buffer.from(body) },
    });
    expect(v.deliveryId!(() => undefined, JSON.parse(body))).toBe('evt_v1');
  });

  it('refuses a SHA-256 signature, a wrong secret and unsigned requests', () => {
    expect(
      v.verify(request(body, { 'x-vercel-signature': hmac('sha256', secret, body) }, secret)).ok,
    ).toBe(false);
    expect(
      v.verify(request(body, { 'x-vercel-signature': hmac('sha1', 'x', body) }, secret)).ok,
    ).toBe(false);
    expect(v.verify(request(body, {}, secret)).ok).toBe(false);
  });
});

describe('credential headers', () => {
  it('include every scheme signature header and the usual credentials', () => {
    for (const h of [
      'authorization',
      'cookie',
      'stripe-signature',
      'x-hub-signature-256',
      'webhook-signature',
      'svix-signature',
      'x-vercel-signature',
    ]) {
      expect(BUILTIN_REGISTRY.credentialHeaders.has(h)).toBe(true);
    }
    expect(BUILTIN_REGISTRY.credentialHeaders.has('x-ci-run-id')).toBe(false);
  });
});
