import { Logger } from '@nestjs/common';
import type Redis from 'ioredis';
import { EventEmitter } from 'node:events';
import type { DataSource, EntityManager, QueryRunner } from 'typeorm';
import type { AppConfig } from '../../config/app-config';
import type { RedisConnections } from '../redis/redis-connections';
import type { Invalidation } from './broadcast-cache';
import { decodeInvalidations, encodeInvalidations, Invalidations } from './invalidations';

function setup() {
  const publish = jest.fn<Promise<number>, [string, string]>().mockResolvedValue(1);
  const dataSource = { subscribers: [] as unknown[] } as unknown as DataSource;
  const subscriber = Object.assign(new EventEmitter(), {
    status: 'ready',
    subscribe: jest.fn<Promise<number>, string[]>().mockResolvedValue(2),
  });
  const invalidations = new Invalidations(
    dataSource,
    { publish } as unknown as Redis,
    { prefix: 'amb', create: () => subscriber } as unknown as RedisConnections,
    { redis: { cacheTtlMs: 5000, cacheAckTimeoutMs: 1000 } } as AppConfig,
  );
  const heard: (Invalidation | null)[] = [];
  invalidations.listen((i) => heard.push(i));
  const runner = { isTransactionActive: true } as QueryRunner;
  const manager = { queryRunner: runner } as EntityManager;
  return { invalidations, publish, subscriber, heard, runner, manager, dataSource };
}

/** Subscribes `invalidations` (on its fake subscriber) and returns its acknowledgement channel. */
async function subscribed({ invalidations, subscriber }: ReturnType<typeof setup>) {
  invalidations.onModuleInit();
  await new Promise((resolve) => setImmediate(resolve));
  expect(invalidations.live).toBe(true);
  const [channel, ackChannel] = subscriber.subscribe.mock.calls[0];
  expect(channel).toBe('amb:invalidate');
  expect(ackChannel).toMatch(/^amb:invalidate:ack:[0-9a-f]{16}$/);
  return ackChannel;
}

function sentMessage(publish: jest.Mock, call = 0) {
  return JSON.parse(publish.mock.calls[call][1] as string) as { from: string; seq: number };
}

describe('Invalidations', () => {
  it('encodes and decodes, and refuses what it cannot read', () => {
    const list = [
      { topic: 'api_key', id: 'k1' },
      { topic: 'user', id: 'u"1' },
    ];
    expect(decodeInvalidations(encodeInvalidations(list))).toEqual({ invalidations: list });
    const ack = { from: 'r1', seq: 7 };
    expect(decodeInvalidations(encodeInvalidations(list, ack))).toEqual({
      invalidations: list,
      ack,
    });
    expect(decodeInvalidations('nope')).toBeNull();
    expect(decodeInvalidations('[["a", 1]]')).toBeNull();
    expect(decodeInvalidations('{}')).toBeNull();
    expect(decodeInvalidations('null')).toBeNull();
    expect(decodeInvalidations('{"from":"r1","seq":1.5,"items":[]}')).toBeNull();
    expect(decodeInvalidations('{"from":"r1","seq":1,"items":[["a"]]}')).toBeNull();
  });

  it('announces a change outside a transaction at once, here and on the channel (unacknowledged while not subscribed)', async () => {
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

  it('returns from a change once every replica PUBLISH reached acknowledged it, itself included', async () => {
    const context = setup();
    const { invalidations, publish, subscriber } = context;
    const ackChannel = await subscribed(context);
    publish.mockResolvedValueOnce(3);
    let done = false;
    const change = invalidations.changed(undefined, 'user', ['u1']).then(() => (done = true));
    await new Promise((resolve) => setImmediate(resolve));
    const sent = sentMessage(publish);
    expect(sent).toEqual({ from: ackChannel.split(':').pop(), seq: 1, items: [['user', 'u1']] });
    subscriber.emit('message', ackChannel, String(sent.seq)); // another replica
    subscriber.emit('message', ackChannel, String(sent.seq + 1)); // not this change's
    subscriber.emit('message', 'amb:invalidate', publish.mock.calls[0][1]); // its own copy
    await new Promise((resolve) => setImmediate(resolve));
    expect(done).toBe(false);
    subscriber.emit('message', ackChannel, String(sent.seq));
    await change;
  });

  it("applies another replica's change, then acknowledges it on that replica's channel", async () => {
    const context = setup();
    const { publish, subscriber, heard } = context;
    await subscribed(context);
    expect(heard.splice(0)).toEqual([null]); // subscribing empties the caches
    const text = encodeInvalidations([{ topic: 'api_key', id: 'k9' }], { from: 'r2', seq: 41 });
    subscriber.emit('message', 'amb:invalidate', text);
    expect(heard).toEqual([{ topic: 'api_key', id: 'k9' }]);
    expect(publish).toHaveBeenCalledWith('amb:invalidate:ack:r2', '41');
    // The CLI's messages ask for no acknowledgement; an unreadable one drops everything.
    subscriber.emit('message', 'amb:invalidate', encodeInvalidations([{ topic: 'user', id: 'u' }]));
    subscriber.emit('message', 'amb:invalidate', '{');
    expect(heard.slice(1)).toEqual([{ topic: 'user', id: 'u' }, null]);
    expect(publish).toHaveBeenCalledTimes(1);
  });

  it('returns at the bound when a replica does not acknowledge, and says so', async () => {
    const context = setup();
    const { invalidations, publish } = context;
    await subscribed(context);
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    jest.useFakeTimers();
    try {
      publish.mockResolvedValueOnce(2);
      const change = invalidations.changed(undefined, 'webhook', ['w1']);
      await jest.advanceTimersByTimeAsync(999);
      expect(warn).not.toHaveBeenCalled();
      await jest.advanceTimersByTimeAsync(1);
      await change;
      expect(warn).toHaveBeenCalledWith(
        expect.stringContaining(
          'webhook w1: 2 of 2 replicas did not acknowledge it within 1000 ms',
        ),
      );
    } finally {
      jest.useRealTimers();
      warn.mockRestore();
    }
  });

  it('stops waiting for acknowledgements once its subscription drops, and caches nothing', async () => {
    const context = setup();
    const { invalidations, publish, subscriber, heard } = context;
    await subscribed(context);
    publish.mockResolvedValueOnce(2);
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    // The bound's timer never fires here: only the subscription's end can end the wait.
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick'] });
    try {
      const change = invalidations.changed(undefined, 'user', ['u2']);
      await new Promise((resolve) => setImmediate(resolve));
      subscriber.emit('close');
      await change;
      expect(invalidations.live).toBe(false);
      expect(heard.at(-1)).toBeNull();
    } finally {
      jest.useRealTimers();
      warn.mockRestore();
    }
  });
});
