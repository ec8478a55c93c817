import { randomUUID } from 'node:crypto';
import type { AppConfig } from '../src/config/app-config';
import { RedisConnections } from '../src/common/redis/redis-connections';
import { TcpProxy } from './support/tcp-proxy';
import { REDIS_URL } from './support/test-app';

/** The connections Ambient's services make (pub/sub, counters, presence), on a real Redis. */
describe('Redis connections', () => {
  const proxy = new TcpProxy('127.0.0.1', Number(new URL(REDIS_URL).port || 6379));
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);

  beforeAll(async () => {
    await proxy.start();
    process.on('unhandledRejection', onUnhandled);
  });

  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
    await proxy.stop();
  });

  it('closes without an unhandled rejection right after re-subscribing from a Redis blip', async () => {
    const connections = new RedisConnections({
      redis: { url: `redis://127.0.0.1:${proxy.port}`, prefix: `amb_rc_${randomUUID()}` },
    } as AppConfig);
    const subscriber = connections.create();
    await subscriber.subscribe('amb-test-channel');

    await proxy.stop();
    await proxy.start(); // same port: the connection comes back and subscribes again by itself
    // Cut before Redis answers that SUBSCRIBE, as a shutdown just after the blip may (a quit that
    // does not finish in time is followed by a disconnect).
    const ended = new Promise((resolve) => subscriber.once('end', resolve));
    subscriber.once('ready', () => subscriber.disconnect());
    await ended;
    await connections.onApplicationShutdown();
    await new Promise((resolve) => setImmediate(resolve)); // unhandled rejections are reported by now

    expect(unhandled).toEqual([]);
    expect(subscriber.status).toBe('end');
  });
});
