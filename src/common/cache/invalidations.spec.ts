import type Redis from 'ioredis';
import type { DataSource, EntityManager, QueryRunner } from 'typeorm';
import type { AppConfig } from '../../config/app-config';
import type { RedisConnections } from '../redis/redis-connections';
import type { Invalidation } from './broadcast-cache';
import { decodeInvalidations, encodeInvalidations, Invalidations } from './invalidations';

function setup() {
  const publish = jest.fn<Promise<number>, [string, string]>().mockResolvedValue(1);
  const dataSource = { subscribers: [] as unknown[] } as unknown as DataSource;
  const invalidations = new Invalidations(
    dataSource,
    { publish } as unknown as Redis,
    { prefix: 'amb' } as unknown as RedisConnections,
    { redis: { cacheTtlMs: 5000 } } as AppConfig,
  );
  const heard: (Invalidation | null)[] = [];
  invalidations.listen((i) => heard.push(i));
  const runner = { isTransactionActive: true } as QueryRunner;
  const manager = { queryRunner: runner } as EntityManager;
  return { invalidations, publish, heard, runner, manager, dataSource };
}

describe('Invalidations', () => {
  it('encodes and decodes, and refuses what it cannot read', () => {
    const list = [
      { topic: 'api_key', id: 'k1' },
      { topic: 'user', id: 'u"1' },
    ];
    expect(decodeInvalidations(encodeInvalidations(list))).toEqual(list);
    expect(decodeInvalidations('nope')).toBeNull();
    expect(decodeInvalidations('[["a", 1]]')).toBeNull();
    expect(decodeInvalidations('{}')).toBeNull();
  });

  it('announces a change outside a transaction at once, here and on the channel', async () => {
    const { invalidations, publish, heard } = setup();
    await invalidations.changed(undefined, 'webhook', ['w1', 'w2']);
    expect(heard).toEqual([
      { topic: 'webhook', id: 'w1' },
      { topic: 'webhook', id: 'w2' },
    ]);
    expect(publish).toHaveBeenCalledWith('amb:invalidate', '[["webhook","w1"],["webhook","w2"]]');
  });

  it('holds a change made in a transaction until it commits, and drops it on rollback', async () => {
    const { invalidations, publish, heard, runner, manager, dataSource } = setup();
    expect(dataSource.subscribers).toContain(invalidations);
    await invalidations.changed(manager, 'api_key', ['k1']);
    expect(publish).not.toHaveBeenCalled();
    expect(heard).toEqual([]);
    // A savepoint's commit (still in the outer transaction) announces nothing.
    await invalidations.afterTransactionCommit({ queryRunner: runner } as never);
    expect(publish).not.toHaveBeenCalled();
    (runner as { isTransactionActive: boolean }).isTransactionActive = false;
    await invalidations.afterTransactionCommit({ queryRunner: runner } as never);
    expect(heard).toEqual([{ topic: 'api_key', id: 'k1' }]);
    expect(publish).toHaveBeenCalledTimes(1);

    (runner as { isTransactionActive: boolean }).isTransactionActive = true;
    await invalidations.changed(manager, 'user', ['u1']);
    (runner as { isTransactionActive: boolean }).isTransactionActive = false;
    invalidations.afterTransactionRollback({ queryRunner: runner } as never);
    await invalidations.afterTransactionCommit({ queryRunner: runner } as never);
    expect(publish).toHaveBeenCalledTimes(1);
  });

  it('is not live before it has subscribed, and a failed publish does not fail the change', async () => {
    const { invalidations, publish } = setup();
    expect(invalidations.live).toBe(false);
    publish.mockRejectedValueOnce(new Error('down'));
    await expect(invalidations.changed(undefined, 'user', ['u1'])).resolves.toBeUndefined();
  });
});
