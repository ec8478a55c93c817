import { Logger } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import type { AppConfig } from '../../../../config/app-config';
import type { Factory } from '../entities/factory.entity';
import type { FactoryStore } from '../factory-store.repository';
import { RepositoryPoller } from './repository-poller.service';
import type { RepositorySync } from './repository-sync.service';

describe('RepositoryPoller', () => {
  const config = { factories: { pollIntervalMs: 60_000 } } as AppConfig;
  const factory = { id: 'f1' } as Factory;
  const factories = {
    listRepositoryBacked: () => Promise.resolve([factory]),
  } as unknown as FactoryStore;

  afterEach(() => jest.restoreAllMocks());

  it('waits at shutdown for the poll in progress, so it never uses a closed pool', async () => {
    let finish!: () => void;
    const syncing = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const started: string[] = [];
    const sync = {
      sync: (f: Factory) => {
        started.push(f.id);
        return syncing;
      },
    } as unknown as RepositorySync;
    const registry = new SchedulerRegistry();
    const poller = new RepositoryPoller(config, factories, sync, registry);
    poller.onApplicationBootstrap();
    const poll = poller.poll();
    // The same poll is joined, not started twice.
    expect(poller.poll()).toBe(poll);
    for (let i = 0; i < 100 && !started.length; i++) await Promise.resolve();
    expect(started).toEqual(['f1']);

    let stopped = false;
    const stop = poller.onModuleDestroy().then(() => {
      stopped = true;
    });
    expect(registry.doesExist('interval', 'factories.poll')).toBe(false);
    await Promise.resolve();
    await Promise.resolve();
    expect(stopped).toBe(false);
    finish();
    await stop;
    expect(stopped).toBe(true);
  });

  it('logs a failed poll and lets the next one run', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const sync = {
      sync: jest.fn().mockRejectedValueOnce(new Error('remote gone')).mockResolvedValue(undefined),
    };
    const poller = new RepositoryPoller(
      config,
      factories,
      sync as unknown as RepositorySync,
      new SchedulerRegistry(),
    );
    await poller.poll();
    expect(warn).toHaveBeenCalledWith('factories.poll failed: remote gone');
    await poller.poll();
    expect(sync.sync).toHaveBeenCalledTimes(2);
  });
});
