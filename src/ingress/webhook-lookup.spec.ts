import type { InvalidationBus } from '../common/cache/broadcast-cache';
import type { IngressWebhook, WebhookStore } from '../modules/webhooks/webhook-store.repository';
import { WebhookLookup } from './webhook-lookup';

const TTL_MS = 4000;
const T0 = 1_000_000;

function setup() {
  const reads: string[][] = [];
  const store = {
    findForIngress: (ids: string[]) => {
      reads.push(ids);
      return Promise.resolve(ids.map((id) => ({ id }) as IngressWebhook));
    },
  } as unknown as WebhookStore;
  const invalidations = {
    live: true,
    cacheTtlMs: TTL_MS,
    listen: () => undefined,
  } as unknown as InvalidationBus;
  return { lookup: new WebhookLookup(store, invalidations), reads };
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
});
