// @ts-check
'use strict';
/**
 * hello-ambient: an example Ambient extension (docs/extending.md "Extending Ambient").
 * Load it with AMBIENT_EXTENSIONS=examples/extensions/hello-ambient.
 *
 * Plain CommonJS on purpose: node loads it as is, next to `npm start` (dist/) and the tests (swc).
 * It loads nothing from Ambient: the shapes it fills are the types of the package
 * @ambient/extension-api (packages/extension-api), which `npm run typecheck` checks it against.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- CommonJS, loaded by node as is
const { createHmac, timingSafeEqual } = require('node:crypto');

/** @type {import('@ambient/extension-api').Harness} */
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
 * @type {import('@ambient/extension-api').SignatureVerifier}
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

/**
 * Constant-time text comparison.
 * @param {string} a
 * @param {string} b
 */
function sameText(a, b) {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** @type {readonly import('@ambient/extension-api').TeamRole[]} */
const ROLES = ['admin', 'member', 'viewer'];

/**
 * @param {unknown} role
 * @returns {role is import('@ambient/extension-api').TeamRole}
 */
const isRole = (role) => ROLES.some((known) => known === role);

/**
 * The environment variables this extension reads: Ambient validates them at start-up and hands
 * their values to init and the factories as `settings`.
 * @type {import('@ambient/extension-api').SettingDeclaration[]}
 */
const settings = [
  {
    name: 'HELLO_PROXY_SECRET',
    type: 'string',
    description:
      'what the authenticating proxy sends as X-Hello-Proxy-Secret; unset: hello-proxy recognises no one',
  },
  {
    name: 'HELLO_PROXY_TEAM',
    type: 'string',
    default: 'default',
    description: 'the team of the people the proxy vouches for',
  },
];

/**
 * `hello-proxy`: callers a trusted authenticating proxy in front of Ambient vouches for. The proxy
 * sends `X-Hello-User: <email>` (and optionally `X-Hello-Role: admin|member|viewer`, default
 * viewer) with `X-Hello-Proxy-Secret: <HELLO_PROXY_SECRET>`; the person is a user of the team
 * HELLO_PROXY_TEAM (default "default"), created on first sight. Without HELLO_PROXY_SECRET set, it
 * recognises no one.
 * @type {(context: import('@ambient/extension-api').AuthStrategyContext & import('@ambient/extension-api').ExtensionContext) => import('@ambient/extension-api').AuthStrategy}
 */
const helloProxyStrategy = ({ users, settings }) => ({
  name: 'hello-proxy',
  async authenticate(request) {
    const secret = settings.HELLO_PROXY_SECRET;
    const presented = request.headers['x-hello-proxy-secret'];
    const email = request.headers['x-hello-user'];
    if (typeof secret !== 'string' || typeof presented !== 'string' || typeof email !== 'string') {
      return null;
    }
    if (!sameText(presented, secret)) return null;
    const role = request.headers['x-hello-role'] ?? 'viewer';
    if (!isRole(role)) return null;
    return users.principalOf({ team: String(settings.HELLO_PROXY_TEAM), email, role });
  },
});

/** @type {import('@ambient/extension-api').AmbientExtension} */
module.exports = {
  name: 'hello-ambient',
  settings,
  init({ settings, log }) {
    log.info(
      settings.HELLO_PROXY_SECRET
        ? `hello-proxy recognises the people of team ${settings.HELLO_PROXY_TEAM} its proxy vouches for`
        : 'hello-proxy recognises no one (HELLO_PROXY_SECRET is not set)',
    );
  },
  harnesses: [helloHarness],
  signatureVerifiers: [helloHmacVerifier],
  authStrategies: (context) => [helloProxyStrategy(context)],
};
