'use strict';
/**
 * hello-ambient: an example Ambient extension (README "Extending Ambient").
 * Load it with AMBIENT_EXTENSIONS=examples/extensions/hello-ambient.
 *
 * Plain CommonJS on purpose: node loads it as is, next to `npm start` (dist/) and the tests (swc).
 * It imports nothing from Ambient; the shapes it fills are the types of src/extensions/index.ts.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- CommonJS, loaded by node as is
const { createHmac, timingSafeEqual } = require('node:crypto');

/** @type {import('../../../src/extensions').Harness} */
const helloHarness = {
  type: 'hello',
  async run(context) {
    for (const text of context.userMessages) {
      await context.recordMessage({ role: 'user', content: text });
    }
    await context.emitEvent('hello_greeting', { turns: context.userMessages.length });
    const answer = `Hello from hello-ambient! You said: ${context.userMessages.join('\n\n')}`;
    await context.recordMessage({ role: 'assistant', content: answer });
    return {
      outcome: 'succeeded',
      summary: answer,
      usage: { promptTokens: 0, completionTokens: 0, modelCalls: 0 },
    };
  },
};

const SIGNATURE_HEADER = 'x-hello-signature';

/**
 * `X-Hello-Signature: sha256=<hex HMAC-SHA256 of the raw body keyed with the webhook secret>`.
 * @type {import('../../../src/extensions').SignatureVerifier}
 */
const helloHmacVerifier = {
  scheme: 'hello-hmac',
  credentialHeaders: [SIGNATURE_HEADER],

  verify(request) {
    const header = request.header(SIGNATURE_HEADER);
    if (!header) return { ok: false, reason: 'unsigned request: missing X-Hello-Signature' };
    if (!header.startsWith('sha256=')) {
      return { ok: false, reason: 'hello-hmac: X-Hello-Signature must start with sha256=' };
    }
    const expected = Buffer.from(
      createHmac('sha256', request.secret).update(request.body).digest('hex'),
    );
    const presented = Buffer.from(header.slice('sha256='.length).trim().toLowerCase());
    const matches = presented.length === expected.length && timingSafeEqual(presented, expected);
    // What the signature covers is the body: the replay guard keys on it.
    return matches
      ? { ok: true, signed: { content: request.body } }
      : { ok: false, reason: 'hello-hmac: signature does not match' };
  },

  deliveryId: (header) => header('x-hello-delivery'),

  checkSecret: (secret) => (secret.trim() === '' ? 'the secret is empty' : null),
};

/** Constant-time text comparison. */
function sameText(a, b) {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

const ROLES = ['admin', 'member', 'viewer'];

/**
 * `hello-proxy`: callers a trusted authenticating proxy in front of Ambient vouches for. The proxy
 * sends `X-Hello-User: <email>` (and optionally `X-Hello-Role: admin|member|viewer`, default
 * viewer) with `X-Hello-Proxy-Secret: <HELLO_PROXY_SECRET>`; the person is a user of the team
 * HELLO_PROXY_TEAM (default "default"), created on first sight. Without HELLO_PROXY_SECRET set, it
 * recognises no one.
 * @type {(context: import('../../../src/extensions').AuthStrategyContext) => import('../../../src/extensions').AuthStrategy}
 */
const helloProxyStrategy = ({ users }) => ({
  name: 'hello-proxy',
  async authenticate(request) {
    const secret = process.env.HELLO_PROXY_SECRET;
    const presented = request.headers['x-hello-proxy-secret'];
    const email = request.headers['x-hello-user'];
    if (!secret || typeof presented !== 'string' || typeof email !== 'string') return null;
    if (!sameText(presented, secret)) return null;
    const role = request.headers['x-hello-role'] ?? 'viewer';
    if (!ROLES.includes(role)) return null;
    return users.principalOf({ team: process.env.HELLO_PROXY_TEAM || 'default', email, role });
  },
});

/** @type {import('../../../src/extensions').AmbientExtension} */
module.exports = {
  name: 'hello-ambient',
  harnesses: [helloHarness],
  signatureVerifiers: [helloHmacVerifier],
  authStrategies: (context) => [helloProxyStrategy(context)],
};
