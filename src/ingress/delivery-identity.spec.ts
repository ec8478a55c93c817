import { VERIFIERS } from '../modules/webhooks/verifiers';
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
    const github = VERIFIERS.github;
    expect(
      deliveryIdentity({
        header: headers(all),
        configuredHeader: 'X-CI-Run-Id',
        verifier: github,
        json: {},
        body,
      }),
    ).toEqual({ id: 'ci-7', source: 'configured_header' });
    expect(
      deliveryIdentity({
        header: headers(all),
        configuredHeader: null,
        verifier: github,
        json: {},
        body,
      }),
    ).toEqual({ id: 'gh-guid', source: 'provider' });
    expect(
      deliveryIdentity({
        header: headers(all),
        configuredHeader: null,
        verifier: null,
        json: {},
        body,
      }),
    ).toEqual({ id: 'amb-1', source: 'sender_header' });
    expect(
      deliveryIdentity({
        header: headers({ 'x-warp-delivery-id': 'warp-1' }),
        configuredHeader: null,
        verifier: null,
        json: {},
        body,
      }).id,
    ).toBe('warp-1');
    const hashed = deliveryIdentity({
      header: headers({}),
      configuredHeader: 'X-CI-Run-Id',
      verifier: null,
      json: {},
      body,
    });
    expect(hashed).toEqual({
      id: expect.stringMatching(/^body-sha256:[0-9a-f]{64}$/),
      source: 'body_hash',
    });
    expect(
      deliveryIdentity({
        header: headers({}),
        configuredHeader: null,
        verifier: null,
        json: {},
        body: Buffer.from('{"id":"evt_1"}'),
      }).id,
    ).toBe(hashed.id);
  });

  it('takes body ids for schemes that carry them (stripe event id)', () => {
    expect(
      deliveryIdentity({
        header: headers({}),
        configuredHeader: null,
        verifier: VERIFIERS.stripe,
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
      json: {},
      body,
    });
    expect(long.id).toMatch(/^sha256:[0-9a-f]{64}$/);
    const spaced = deliveryIdentity({
      header: headers({ 'x-ambient-delivery-id': 'has space' }),
      configuredHeader: null,
      verifier: null,
      json: {},
      body,
    });
    expect(spaced.id).toMatch(/^sha256:/);
    const blank = deliveryIdentity({
      header: headers({ 'x-ambient-delivery-id': '  ' }),
      configuredHeader: null,
      verifier: null,
      json: {},
      body,
    });
    expect(blank.source).toBe('body_hash');
  });
});
