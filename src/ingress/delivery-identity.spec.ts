import { builtinVerifier } from '../modules/webhooks/verifiers/builtin-verifiers.fixture';
import { deliveryIdentity } from './delivery-identity';

const headers = (h: Record<string, string>) => (name: string) => h[name.toLowerCase()];
const body = Buffer.from('{"id":"evt_1"}');

describe('deliveryIdentity', () => {
  const all = {
    'x-ci-run-id': 'ci-7',
    'x-github-delivery': 'gh-guid',
    'x-ambient-delivery-id': 'amb-1',
    'x-warp-delivery-id': 'warp-1',
  };

  it('prefers the configured header, then the provider id, then the sender headers, then the body hash', () => {
    const github = builtinVerifier('github');
    expect(
      deliveryIdentity({
        header: headers(all),
        configuredHeader: 'X-CI-Run-Id',
        verifier: github,
        signed: null,
        json: {},
        body,
      }),
    ).toEqual({
      id: 'ci-7',
      source: 'configured_header',
      contentKey: null,
      providerKey: 'gh-guid',
      senderKey: 'amb-1',
    });
    expect(
      deliveryIdentity({
        header: headers(all),
        configuredHeader: null,
        verifier: github,
        signed: null,
        json: {},
        body,
      }),
    ).toEqual({
      id: 'gh-guid',
      source: 'provider',
      contentKey: null,
      providerKey: 'gh-guid',
      senderKey: 'amb-1',
    });
    expect(
      deliveryIdentity({
        header: headers(all),
        configuredHeader: null,
        verifier: null,
        signed: null,
        json: {},
        body,
      }),
    ).toEqual({
      id: 'amb-1',
      source: 'sender_header',
      contentKey: null,
      providerKey: null,
      senderKey: 'amb-1',
    });
    expect(
      deliveryIdentity({
        header: headers({ 'x-warp-delivery-id': 'warp-1' }),
        configuredHeader: null,
        verifier: null,
        signed: null,
        json: {},
        body,
      }).id,
    ).toBe('warp-1');
    const hashed = deliveryIdentity({
      header: headers({}),
      configuredHeader: 'X-CI-Run-Id',
      verifier: null,
      signed: null,
      json: {},
      body,
    });
    expect(hashed).toEqual({
      id: expect.stringMatching(/^body-sha256:[0-9a-f]{64}$/),
      source: 'body_hash',
      contentKey: null,
      providerKey: null,
      senderKey: null,
    });
    expect(
      deliveryIdentity({
        header: headers({}),
        configuredHeader: null,
        verifier: null,
        signed: null,
        json: {},
        body: Buffer.from('{"id":"evt_1"}'),
      }).id,
    ).toBe(hashed.id);
  });

  it('keeps every id sent as a key of its own, whichever of them names the delivery', () => {
    const identity = (h: Record<string, string>) =>
      deliveryIdentity({
        header: headers(h),
        configuredHeader: 'X-CI-Run-Id',
        verifier: builtinVerifier('github'),
        signed: { content: body },
        json: {},
        body,
      });
    const named = identity(all);
    const replayed = identity({ 'x-github-delivery': 'gh-guid', 'x-warp-delivery-id': 'warp-9' });
    expect(named.id).toBe('ci-7');
    expect(replayed.id).toBe('gh-guid');
    expect(replayed.providerKey).toBe(named.providerKey);
    expect(replayed.senderKey).toBe('warp-9');
    const hashedIds = identity({ 'x-ci-run-id': 'ci-8', 'x-ambient-delivery-id': 'y'.repeat(300) });
    expect(hashedIds.providerKey).toBeNull();
    expect(hashedIds.senderKey).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('takes body ids for schemes that carry them (stripe event id)', () => {
    expect(
      deliveryIdentity({
        header: headers({}),
        configuredHeader: null,
        verifier: builtinVerifier('stripe'),
        signed: null,
        json: { id: 'evt_1' },
        body,
      }).id,
    ).toBe('evt_1');
  });

  it('hashes ids that are not short printable ASCII, and ignores blank ones', () => {
    const long = deliveryIdentity({
      header: headers({ 'x-ambient-delivery-id': 'x'.repeat(201) }),
      configuredHeader: null,
      verifier: null,
      signed: null,
      json: {},
      body,
    });
    expect(long.id).toMatch(/^sha256:[0-9a-f]{64}$/);
    const spaced = deliveryIdentity({
      header: headers({ 'x-ambient-delivery-id': 'has space' }),
      configuredHeader: null,
      verifier: null,
      signed: null,
      json: {},
      body,
    });
    expect(spaced.id).toMatch(/^sha256:/);
    const blank = deliveryIdentity({
      header: headers({ 'x-ambient-delivery-id': '  ' }),
      configuredHeader: null,
      verifier: null,
      signed: null,
      json: {},
      body,
    });
    expect(blank.source).toBe('body_hash');
  });

  it('a signed id is the provider id after the configured header, and always the replay key', () => {
    const standard = builtinVerifier('standard_webhooks');
    const signed = { id: 'msg_signed', content: Buffer.from('msg_signed.1.{}') };
    const withConfigured = deliveryIdentity({
      header: headers({ ...all, 'webhook-id': 'unsigned-msg' }),
      configuredHeader: 'X-CI-Run-Id',
      verifier: standard,
      signed,
      json: {},
      body,
    });
    expect(withConfigured).toEqual({
      id: 'ci-7',
      source: 'configured_header',
      contentKey: expect.stringMatching(/^signed-id:[0-9a-f]{64}$/),
      // The signed id is the provider's id: its key is the content key, not another.
      providerKey: null,
      senderKey: 'amb-1',
    });
    const withoutConfigured = deliveryIdentity({
      header: headers({ ...all, 'webhook-id': 'unsigned-msg' }),
      configuredHeader: null,
      verifier: standard,
      signed,
      json: {},
      body,
    });
    expect(withoutConfigured).toEqual({
      id: 'msg_signed',
      source: 'signed_id',
      contentKey: withConfigured.contentKey,
      providerKey: null,
      senderKey: 'amb-1',
    });
    // A retry re-signs the same id with a new timestamp: the same replay key.
    const retry = deliveryIdentity({
      header: headers({}),
      configuredHeader: null,
      verifier: standard,
      signed: { id: 'msg_signed', content: Buffer.from('msg_signed.2.{}') },
      json: {},
      body,
    });
    expect(retry.contentKey).toBe(withConfigured.contentKey);
    const other = deliveryIdentity({
      header: headers({}),
      configuredHeader: null,
      verifier: standard,
      signed: { id: 'msg_other', content: Buffer.from('msg_other.1.{}') },
      json: {},
      body,
    });
    expect(other.contentKey).not.toBe(withConfigured.contentKey);
  });

  it('a signature without an id adds the digest of the signed content, whatever the unsigned id', () => {
    const signed = { content: Buffer.from('1700000000.{"id":"evt_1"}') };
    const keys = ['ci-1', 'ci-2'].map(
      (runId) =>
        deliveryIdentity({
          header: headers({ 'x-ci-run-id': runId }),
          configuredHeader: 'X-CI-Run-Id',
          verifier: builtinVerifier('stripe'),
          signed,
          json: { id: 'evt_1' },
          body,
        }).contentKey,
    );
    expect(keys[0]).toMatch(/^signed-sha256:[0-9a-f]{64}$/);
    expect(keys[1]).toBe(keys[0]);
    const other = deliveryIdentity({
      header: headers({}),
      configuredHeader: null,
      verifier: builtinVerifier('stripe'),
      signed: { content: Buffer.from('1700000001.{"id":"evt_1"}') },
      json: { id: 'evt_1' },
      body,
    });
    expect(other).toMatchObject({ id: 'evt_1', source: 'provider' });
    expect(other.contentKey).not.toBe(keys[0]);
  });
});
