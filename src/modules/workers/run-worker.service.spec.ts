import { loadConfig } from '../../config/app-config';
import type { RunCapacity, RunQueue } from '../runs';
import type { RunExecutor } from './run-executor.service';
import { RunWorker } from './run-worker.service';
import type { SandboxService } from './sandbox/sandbox.service';
import { Sandboxes } from './sandbox/sandboxes';
import type { SandboxBackend } from './sandbox/sandbox.types';

describe('RunWorker.drain', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('stops the warm pool as it begins, while the runs still end in their sandboxes', async () => {
    const config = loadConfig({
      AMBIENT_CONFIG_FILE: 'config/default.yaml',
      AMBIENT_SANDBOX: 'pooled',
    });
    const stopWarming = jest.fn();
    const drain = jest.fn(() => Promise.resolve(true));
    const backend: SandboxBackend = { name: 'pooled', open: jest.fn(), stopWarming, drain };
    const sandboxes = new Sandboxes(config.sandbox, '/tmp/ws', 'test', () => undefined, [
      { name: 'pooled', isolated: true, create: () => backend },
    ]);
    await sandboxes.select();
    const executor = { activeCount: 1, abortAll: jest.fn() };
    const worker = new RunWorker(
      config,
      {} as RunQueue,
      executor as unknown as RunExecutor,
      {} as RunCapacity,
      sandboxes as SandboxService,
    );

    let drained = false;
    void worker.drain().then(() => (drained = true));
    await jest.advanceTimersByTimeAsync(1_000);
    expect(stopWarming).toHaveBeenCalledTimes(1);
    expect(drain).not.toHaveBeenCalled();
    expect(drained).toBe(false);

    executor.activeCount = 0;
    await jest.advanceTimersByTimeAsync(100);
    expect(drained).toBe(true);
    expect(executor.abortAll).not.toHaveBeenCalled();
  });
});
