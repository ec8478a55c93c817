import type { InvalidationBus } from '../common/cache/broadcast-cache';
import type { IngressWebhook, WebhookStore } from '../modules/webhooks/webhook-store.repository';
import { WebhookLookup } from './webhook-lookup';

const TTL_MS = 4000;
const T0 = 1_000_000;

function webhook(id: string, ciphertext = 'ct-1'): IngressWebhook {
  return {
    id,
    teamId: 'team',
    authMode: 'token',
    signatureScheme: null,
    secretCiphertext: Buffer.from(ciphertext),
    deliveryIdHeader: null,
  };
}

function setup() {
  const reads: string[][] = [];
  const rows = new Map<string, IngressWebhook>();
  const store = {
    findForIngress: (ids: string[]) => {
      reads.push(ids);
      // A new object per read, as MySQL's rows are.
      return Promise.resolve(ids.map((id) => ({ ...(rows.get(id) ?? webhook(id)) })));
    },
  } as unknown as WebhookStore;
  const invalidations = {
    live: true,
    cacheTtlMs: TTL_MS,
    listen: () => undefined,
  } as unknown as InvalidationBus;
  return { lookup: new WebhookLookup(store, invalidations), reads, rows };
}

describe('WebhookLookup', () => {
  beforeEach(() => jest.useFakeTimers({ now: T0 }));
  afterEach(() => jest.useRealTimers());

  it('reloads webhooks in steady use before they expire, together, so no delivery waits for MySQL', async () => {
    const { lookup, reads } = setup();
    await Promise.all([lookup.find('w1'), lookup.find('w2')]);
    expect(reads).toEqual([['w1', 'w2']]);

    // In the last quarter of their life both are served from memory and reloaded behind.
    jest.setSystemTime(T0 + TTL_MS * 0.8);
    const served = await lookup.find('w1');
    await lookup.find('w2');
    expect(served?.id).toBe('w1');
    expect(reads).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(TTL_MS);
    expect(reads).toEqual([
      ['w1', 'w2'],
      ['w1', 'w2'], // one query for both
    ]);

    // Past the first load's expiry, a delivery finds the reloaded entry without a query.
    jest.setSystemTime(T0 + TTL_MS * 1.5);
    expect((await lookup.find('w1'))?.id).toBe('w1');
    expect(reads).toHaveLength(2);
  });

  it('keeps the cached webhook, and the secret decrypted on it, when a reload finds it unchanged', async () => {
    const { lookup, reads, rows } = setup();
    const first = await lookup.find('w1');
    first!.secret = 'decrypted once';
    rows.set('w2', webhook('w2'));
    await lookup.find('w2');
    rows.set('w3', webhook('w3'));
    await lookup.find('w3');

    jest.setSystemTime(T0 + TTL_MS * 0.8);
    await lookup.find('w1');
    rows.set('w2', webhook('w2', 'ct-2')); // rotated
    await lookup.find('w2');
    rows.set('w3', { ...webhook('w3'), deliveryIdHeader: 'x-event-id' }); // reconfigured
    await lookup.find('w3');
    await jest.advanceTimersByTimeAsync(TTL_MS / 4);
    expect(reads).toHaveLength(4);

    jest.setSystemTime(T0 + TTL_MS * 1.5);
    const again = await lookup.find('w1');
    expect(again).toBe(first);
    expect(again?.secret).toBe('decrypted once');
    const rotated = await lookup.find('w2');
    expect(rotated?.secretCiphertext.toString()).toBe('ct-2');
    expect(rotated).not.toHaveProperty('secret');
    expect((await lookup.find('w3'))?.deliveryIdHeader).toBe('x-event-id');
    expect(reads).toHaveLength(4);
  });
});
