import type { Invalidation, InvalidationBus } from '../../common/cache/broadcast-cache';
import { API_KEY_TOPIC, USER_TOPIC, type ApiKeysService } from './api-keys.service';
import type { UserSessionsService } from './sessions/user-sessions.service';
import { KeyRevocationWatch } from './key-revocation-watch.service';

describe('KeyRevocationWatch', () => {
  let valid: Set<string>;
  let fail: Error | null;
  const queries: string[][] = [];
  const apiKeys = {
    stillValid: (ids: string[]) => {
      queries.push([...ids]);
      return fail
        ? Promise.reject(fail)
        : Promise.resolve(new Set(ids.filter((i) => valid.has(i))));
    },
  } as unknown as ApiKeysService;
  let watch: KeyRevocationWatch;

  beforeEach(() => {
    valid = new Set(['a', 'b']);
    fail = null;
    queries.length = 0;
    watch = new KeyRevocationWatch(apiKeys, {
      stillLive: () => Promise.resolve(new Set<string>()),
    } as unknown as UserSessionsService);
  });
  afterEach(() => watch.onModuleDestroy());

  it('checks every watched key in one query and ends only what a revoked key opened', async () => {
    const ended: string[] = [];
    watch.watch('a', () => ended.push('a1'));
    watch.watch('a', () => ended.push('a2'));
    watch.watch('b', () => ended.push('b'));
    valid.delete('a');
    await watch.checkNow();
    expect(queries).toEqual([['a', 'b']]);
    expect(ended).toEqual(['a1', 'a2']);
    expect(watch.watchedKeys).toBe(1);
    // Once ended, never again.
    await watch.checkNow();
    expect(ended).toEqual(['a1', 'a2']);
  });

  it('forgets what was closed meanwhile, and closes nothing when the check fails', async () => {
    const ended: string[] = [];
    const stop = watch.watch('a', () => ended.push('a'));
    watch.watch('b', () => ended.push('b'));
    stop();
    expect(watch.watchedKeys).toBe(1);
    fail = new Error('database unreachable');
    valid.clear();
    await watch.checkNow();
    expect(ended).toEqual([]);
    fail = null;
    await watch.checkNow();
    expect(queries.at(-1)).toEqual(['b']);
    expect(ended).toEqual(['b']);
    expect(watch.watchedKeys).toBe(0);
  });

  describe('with announced changes', () => {
    let announce: (change: Invalidation | null) => void;
    const settle = () => new Promise((resolve) => setImmediate(resolve));

    beforeEach(() => {
      watch = new KeyRevocationWatch(
        apiKeys,
        { stillLive: () => Promise.resolve(new Set<string>()) } as unknown as UserSessionsService,
        {
          listen: (listener: (change: Invalidation | null) => void) => void (announce = listener),
        } as unknown as InvalidationBus,
      );
    });

    it('checks at once when a watched key or any user changed, not for other keys', async () => {
      const ended: string[] = [];
      watch.watch('a', () => ended.push('a'));
      valid.delete('a');
      announce({ topic: API_KEY_TOPIC, id: 'unwatched' });
      await settle();
      expect(queries).toEqual([]);
      announce({ topic: API_KEY_TOPIC, id: 'a' });
      await settle();
      expect(ended).toEqual(['a']);
      watch.watch('b', () => ended.push('b'));
      valid.delete('b');
      announce({ topic: USER_TOPIC, id: 'someone' });
      await settle();
      expect(ended).toEqual(['a', 'b']);
      expect(queries).toEqual([['a'], ['b']]);
    });

    it('checks again after a check under way, which may have read before the change', async () => {
      const ended: string[] = [];
      watch.watch('a', () => ended.push('a'));
      const first = watch.checkNow(); // reads 'a' as valid
      announce({ topic: API_KEY_TOPIC, id: 'a' });
      valid.delete('a');
      await first;
      await settle();
      expect(ended).toEqual(['a']);
      expect(queries).toEqual([['a'], ['a']]);
    });
  });
});
