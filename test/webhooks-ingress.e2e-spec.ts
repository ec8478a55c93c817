import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { useTestApp } from './support/use-test-app';
import { createFactory, createWebhook, deliver } from './support/webhook-helpers';

/** Real HTTP to the ingress port: every status of the delivery contract, auth modes, log. */
describe('webhook ingress (api + ingress, real HTTP)', () => {
  let factory: string;
  let counter = 0;

  const { app, api } = useTestApp(
    'wh_ingress',
    ['api', 'ingress'],
    {
      'webhooks.baseUrl': 'http://hooks.example.test',
      'webhooks.deliveriesPerMinute': 5,
      'webhooks.authFailuresPerMinute': 3,
    },
    { model: false },
  );

  beforeAll(async () => {
    factory = await createFactory(api);
  });

  /** A fresh token webhook (own rate budget) and its local ingress URL. */
  async function tokenWebhook(extra: Record<string, unknown> = {}) {
    const hook = await createWebhook(api, factory, { name: `hook-${++counter}`, ...extra });
    const local = hook.url.replace('http://hooks.example.test', app.ingressUrl);
    return { ...hook, local, auth: { Authorization: `Bearer ${hook.secret}` } };
  }

  const log = async (hook: { uid: string }) =>
    (await api.get(`/factory/${factory}/webhooks/${hook.uid}/deliveries`)).body.deliveries as {
      id: string;
      delivery_id: string;
      status: string;
      size_bytes: number;
    }[];

  it('accepts a bearer-token delivery with 202 {delivery_id} once it is stored, and logs it', async () => {
    const hook = await tokenWebhook();
    expect(hook.url).toBe(`http://hooks.example.test/webhooks/w/${hook.uid}`);
    expect(hook.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const body = '{"event":"deploy.finished","service":"api"}';
    const res = await deliver(hook.local, body, { ...hook.auth, 'X-Ambient-Delivery-Id': 'dep-1' });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ delivery_id: 'dep-1' });
    // Written straight to Node's response: still typed JSON, and the middleware's headers kept.
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('x-request-id')).toMatch(/\S/);
    const [entry] = await log(hook);
    expect(entry).toMatchObject({
      delivery_id: 'dep-1',
      status: 'Accepted',
      size_bytes: body.length,
    });
    const detail = await api.get(`/factory/${factory}/webhooks/${hook.uid}/deliveries/${entry.id}`);
    expect(detail.body.payload).toEqual(JSON.parse(body));
    const raw = await api.get(
      `/factory/${factory}/webhooks/${hook.uid}/deliveries/${entry.id}/payload`,
    );
    expect(raw.text ?? raw.body.toString()).toBe(body);
  });

  it('stores every body byte for byte: multi-byte text, quotes, backslashes, a byte-order mark', async () => {
    const hook = await tokenWebhook();
    const bodies = [
      Buffer.from(
        String.raw`{"name":"Zoë 'quoted' \\ \n","emoji":"🚀","cjk":"漢字","nul":"\u0000"}`,
      ),
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"bom":true}')]),
    ];
    for (const body of bodies) {
      expect((await deliver(hook.local, body, hook.auth)).status).toBe(202);
    }
    const entries = (await log(hook)).reverse();
    expect(entries.map((e) => e.size_bytes)).toEqual(bodies.map((b) => b.length));
    for (const [i, entry] of entries.entries()) {
      const raw = await fetch(
        `${app.baseUrl}/factory/${factory}/webhooks/${hook.uid}/deliveries/${entry.id}/payload`,
        { headers: { Authorization: `Bearer ${app.apiKey}` } },
      );
      expect(Buffer.from(await raw.arrayBuffer()).equals(bodies[i])).toBe(true);
    }
  });

  it('accepts any JSON value without a Content-Type, and answers 400 to invalid JSON', async () => {
    const hook = await tokenWebhook();
    for (const value of ['[1,2,3]', '"text"', '42', 'null']) {
      const res = await deliver(hook.local, value, { ...hook.auth, 'Content-Type': 'text/plain' });
      expect(res.status).toBe(202);
    }
    const bad = await deliver(hook.local, '{"unterminated": ', hook.auth);
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ status: 400, detail: 'the body is not valid JSON' });
    expect((await log(hook))[0]).toMatchObject({
      status: 'Rejected (invalid JSON)',
      size_bytes: 17,
    });
    const detail = await api.get(
      `/factory/${factory}/webhooks/${hook.uid}/deliveries/${(await log(hook))[0].id}`,
    );
    expect(detail.body.payload).toBeUndefined();
  });

  it('answers 401 to a missing or wrong token and logs Rejected (auth)', async () => {
    const hook = await tokenWebhook();
    expect((await deliver(hook.local, '{}')).status).toBe(401);
    const wrong = await deliver(hook.local, '{}', {
      Authorization: 'Bearer not-the-secret-at-all',
    });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('content-type')).toContain('application/problem+json');
    expect((await log(hook)).map((e) => e.status)).toEqual(['Rejected (auth)', 'Rejected (auth)']);
  });

  it('answers 404 to unknown and malformed webhook ids, and 405 to other methods', async () => {
    expect(
      (await deliver(`${app.ingressUrl}/webhooks/w/AAAAAAAAAAAAAAAAAAAAAA`, '{}')).status,
    ).toBe(404);
    expect((await deliver(`${app.ingressUrl}/webhooks/w/nope`, '{}')).status).toBe(404);
    const hook = await tokenWebhook();
    for (const method of ['GET', 'PUT', 'DELETE', 'PATCH']) {
      const res = await deliver(hook.local, '{}', hook.auth, method);
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
    }
    // A token webhook has no token segment: that URL does not exist.
    expect((await deliver(`${hook.local}/extra`, '{}', hook.auth)).status).toBe(404);
  });

  it('refuses bodies over 256 KB with 413, by Content-Length and while streaming', async () => {
    const hook = await tokenWebhook();
    const justFits = `"${'a'.repeat(256 * 1024 - 2)}"`;
    expect((await deliver(hook.local, justFits, hook.auth)).status).toBe(202);
    const big = `"${'a'.repeat(256 * 1024)}"`;
    expect((await deliver(hook.local, big, hook.auth)).status).toBe(413);
    // Chunked, no Content-Length: refused once the stream passes the cap, before it ends.
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(hook.local, { method: 'POST', headers: hook.auth }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', (err) => setTimeout(() => reject(err), 1000)); // the answer wins if it came
      const chunk = Buffer.alloc(64 * 1024, 'a');
      let sent = 0;
      const pump = () => {
        // Up to 2 MB, but the answer must arrive long before the sender is done.
        while (sent < 32 && req.write(chunk)) sent++;
        if (sent < 32) req.once('drain', pump);
        else req.end();
      };
      pump();
    });
    expect(status).toBe(413);
    const entries = await log(hook);
    expect(entries.slice(0, 2).map((e) => e.status)).toEqual([
      'Rejected (too large)',
      'Rejected (too large)',
    ]);
  });

  it.each([
    { refusal: 'too large', token: null, status: 413, logged: 'Rejected (too large)' },
    { refusal: 'wrong token', token: 'wrong-token-value', status: 401, logged: 'Rejected (auth)' },
  ])(
    'closes the connection after refusing ($refusal) a chunked body that keeps coming',
    async (c) => {
      const hook = await tokenWebhook();
      const authorization = c.token ? `Bearer ${c.token}` : hook.auth.Authorization;
      const url = new URL(hook.local);
      // A raw socket that never stops sending and stays open after the server's FIN (half-open):
      // only the server can end this exchange, by ceasing to read and cutting the connection.
      const socket = connect({ port: Number(url.port), host: url.hostname, allowHalfOpen: true });
      let response = '';
      // The server answers, sends its FIN, then resets once it stops discarding. Which of the two
      // this client sees first is the kernel's and libuv's business: a write that meets the reset
      // fails (EPIPE/ECONNRESET) and destroys the socket before the queued FIN is read.
      let cutByServer: string | null = null;
      socket.on('data', (data: Buffer) => (response += data.toString('latin1')));
      socket.on('end', () => (cutByServer ??= 'FIN'));
      socket.on('error', (err: NodeJS.ErrnoException) => (cutByServer ??= err.code ?? 'error'));
      const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      socket.write(
        `POST ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\n` +
          `Authorization: ${authorization}\r\nTransfer-Encoding: chunked\r\n\r\n`,
      );
      const data = Buffer.alloc(64 * 1024, 'a');
      const chunk = Buffer.concat([
        Buffer.from(`${data.length.toString(16)}\r\n`),
        data,
        Buffer.from('\r\n'),
      ]);
      const pump = () => {
        while (!socket.destroyed && socket.write(chunk));
        if (!socket.destroyed) socket.once('drain', pump);
      };
      pump();
      await closed;
      expect(response).toMatch(new RegExp(`^HTTP/1\\.1 ${c.status} `));
      expect(response).toMatch(/\r\nconnection: close\r\n/i);
      expect(['FIN', 'EPIPE', 'ECONNRESET']).toContain(cutByServer);
      expect((await log(hook))[0]).toMatchObject({ status: c.logged });
    },
  );

  it('limits deliveries per webhook with 429 and Retry-After, and failed auth on its own budget', async () => {
    const hook = await tokenWebhook();
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++)
      statuses.push((await deliver(hook.local, `{"n":${i}}`, hook.auth)).status);
    expect(statuses).toEqual([202, 202, 202, 202, 202, 429]);
    const limited = await deliver(hook.local, '{"n":99}', hook.auth);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);

    const other = await tokenWebhook();
    const failures = [];
    for (let i = 0; i < 4; i++)
      failures.push(
        await deliver(other.local, '{}', { Authorization: 'Bearer wrong-token-value' }),
      );
    expect(failures.map((f) => f.status)).toEqual([401, 401, 401, 429]);
    expect(failures[2].headers.get('retry-after')).toBeNull();
    expect(Number(failures[3].headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // The failure budget never locks out the right credentials.
    expect((await deliver(other.local, '{"ok":1}', other.auth)).status).toBe(202);
  });

  it('url_token: the token is a path segment shown once; afterwards the URL shows {token}', async () => {
    const hook = await tokenWebhook({ auth_mode: 'url_token' });
    expect(hook.url).toBe(`http://hooks.example.test/webhooks/w/${hook.uid}/${hook.secret}`);
    expect((await deliver(hook.local, '{"a":1}')).status).toBe(202);
    expect(
      (await deliver(hook.local.replace(hook.secret!, 'x'.repeat(43)), '{"a":2}')).status,
    ).toBe(401);
    expect((await deliver(`${app.ingressUrl}/webhooks/w/${hook.uid}`, '{"a":3}')).status).toBe(401);
    const shown = await api.get(`/factory/${factory}/webhooks/${hook.uid}`);
    expect(shown.body.url).toBe(`http://hooks.example.test/webhooks/w/${hook.uid}/{token}`);
    expect(JSON.stringify(shown.body)).not.toContain(hook.secret);
    const listed = await api.get(`/factory/${factory}/webhooks`);
    expect(JSON.stringify(listed.body)).not.toContain(hook.secret);
  });

  it('disable answers 404 at once, enable brings it back; delete answers 404 for good', async () => {
    const hook = await tokenWebhook();
    expect((await api.post(`/factory/${factory}/webhooks/${hook.uid}/disable`)).body.enabled).toBe(
      false,
    );
    expect((await deliver(hook.local, '{"a":1}', hook.auth)).status).toBe(404);
    expect((await api.post(`/factory/${factory}/webhooks/${hook.uid}/enable`)).body.enabled).toBe(
      true,
    );
    expect((await deliver(hook.local, '{"a":2}', hook.auth)).status).toBe(202);
    expect((await api.delete(`/factory/${factory}/webhooks/${hook.uid}`)).status).toBe(204);
    expect((await deliver(hook.local, '{"a":3}', hook.auth)).status).toBe(404);
    expect((await api.get(`/factory/${factory}/webhooks/${hook.uid}`)).status).toBe(404);
  });

  it('rotation: the new secret is shown once and the old one fails at once', async () => {
    const hook = await tokenWebhook();
    const rotated = await api.post(`/factory/${factory}/webhooks/${hook.uid}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(rotated.body.secret).not.toBe(hook.secret);
    expect((await deliver(hook.local, '{"a":1}', hook.auth)).status).toBe(401);
    expect(
      (await deliver(hook.local, '{"a":1}', { Authorization: `Bearer ${rotated.body.secret}` }))
        .status,
    ).toBe(202);
  });

  it('deduplicates by sender header (both names) and by body hash: 202, logged Duplicate', async () => {
    const hook = await tokenWebhook({ delivery_id_header: 'X-CI-Run-Id' });
    const first = await deliver(hook.local, '{"n":1}', { ...hook.auth, 'X-CI-Run-Id': 'run-7' });
    const again = await deliver(hook.local, '{"n":2}', { ...hook.auth, 'X-CI-Run-Id': 'run-7' });
    expect([first.status, again.status]).toEqual([202, 202]);
    expect(again.body).toEqual({ delivery_id: 'run-7' });
    const warp = await deliver(hook.local, '{"n":3}', {
      ...hook.auth,
      'X-Warp-Delivery-Id': 'w-1',
    });
    const same = await deliver(hook.local, '{"n":4}', {
      ...hook.auth,
      'X-Ambient-Delivery-Id': 'w-1',
    });
    expect([warp.body.delivery_id, same.body.delivery_id]).toEqual(['w-1', 'w-1']);
    const hashed = await deliver(hook.local, '{"same":"body"}', hook.auth);
    expect(hashed.body.delivery_id).toMatch(/^body-sha256:[0-9a-f]{64}$/);
    expect((await log(hook)).map((e) => e.status)).toEqual([
      'Accepted',
      'Duplicate',
      'Accepted',
      'Duplicate',
      'Accepted',
    ]);
    const hookB = await tokenWebhook();
    const a = await deliver(hookB.local, '{"same":"body"}', hookB.auth);
    const b = await deliver(hookB.local, '{"same":"body"}', hookB.auth);
    expect(b.body.delivery_id).toBe(a.body.delivery_id);
    expect((await log(hookB)).map((e) => e.status)).toEqual(['Duplicate', 'Accepted']);
  });

  it('lets exactly one of many concurrent identical deliveries in', async () => {
    const hook = await tokenWebhook();
    const results = await Promise.all(
      Array.from({ length: 5 }, () =>
        deliver(hook.local, '{"concurrent":true}', {
          ...hook.auth,
          'X-Ambient-Delivery-Id': 'c-1',
        }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual([202, 202, 202, 202, 202]);
    const statuses = (await log(hook)).map((e) => e.status);
    expect(statuses.filter((s) => s === 'Accepted')).toHaveLength(1);
    expect(statuses.filter((s) => s === 'Duplicate')).toHaveLength(4);
  });

  it('lets exactly one of many concurrent identical bodies in when no delivery id is sent', async () => {
    const hook = await tokenWebhook();
    const results = await Promise.all(
      Array.from({ length: 5 }, () => deliver(hook.local, '{"same":"body"}', hook.auth)),
    );
    expect(results.map((r) => r.status)).toEqual([202, 202, 202, 202, 202]);
    const ids = new Set(results.map((r) => r.body.delivery_id));
    expect([...ids]).toEqual([expect.stringMatching(/^body-sha256:[0-9a-f]{64}$/)]);
    const statuses = (await log(hook)).map((e) => e.status);
    expect(statuses).toHaveLength(5);
    expect(statuses.filter((s) => s === 'Accepted')).toHaveLength(1);
    expect(statuses.filter((s) => s === 'Duplicate')).toHaveLength(4);
  });

  it('pages the log newest first', async () => {
    const hook = await tokenWebhook();
    for (let i = 0; i < 3; i++)
      await deliver(hook.local, `{"i":${i}}`, { ...hook.auth, 'X-Ambient-Delivery-Id': `p-${i}` });
    const first = await api.get(`/factory/${factory}/webhooks/${hook.uid}/deliveries?limit=2`);
    expect(first.body.deliveries.map((d: { delivery_id: string }) => d.delivery_id)).toEqual([
      'p-2',
      'p-1',
    ]);
    expect(first.body.page_info.has_next_page).toBe(true);
    const next = await api.get(
      `/factory/${factory}/webhooks/${hook.uid}/deliveries?limit=2&cursor=${first.body.page_info.next_cursor}`,
    );
    expect(next.body.deliveries.map((d: { delivery_id: string }) => d.delivery_id)).toEqual([
      'p-0',
    ]);
    expect(next.body.page_info).toEqual({ has_next_page: false, next_cursor: '' });
    expect(
      (await api.get(`/factory/${factory}/webhooks/${hook.uid}/deliveries?limit=0`)).body.detail,
    ).toMatch(/^limit:/);
  });
});
