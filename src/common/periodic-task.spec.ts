import { Logger } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { PeriodicTask } from './periodic-task';

function deferred() {
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('PeriodicTask', () => {
  const logger = new Logger('test');
  let registry: SchedulerRegistry;

  beforeEach(() => {
    registry = new SchedulerRegistry();
    jest.spyOn(logger, 'warn').mockImplementation(() => undefined);
  });

  it('joins a run in progress instead of starting a second one', async () => {
    const gate = deferred();
    const work = jest.fn(() => gate.promise);
    const task = new PeriodicTask({ name: 't', intervalMs: 1000, work, logger, registry });
    const first = task.runNow();
    const second = task.runNow();
    expect(work).toHaveBeenCalledTimes(1);
    gate.resolve();
    await Promise.all([first, second]);
    await task.runNow();
    expect(work).toHaveBeenCalledTimes(2);
  });

  it('logs a failure and runs again next time', async () => {
    const work = jest
      .fn<Promise<void>, []>()
      .mockRejectedValueOnce(new Error('database down'))
      .mockResolvedValueOnce(undefined);
    const task = new PeriodicTask({ name: 'sweep', intervalMs: 1000, work, logger, registry });
    await task.runNow();
    expect(logger.warn).toHaveBeenCalledWith('sweep failed: database down');
    await task.runNow();
    expect(work).toHaveBeenCalledTimes(2);
  });

  it('registers its interval, and stopping removes it and waits for the run in progress', async () => {
    const gate = deferred();
    const task = new PeriodicTask({
      name: 'sweep',
      intervalMs: 60_000,
      work: () => gate.promise,
      logger,
      registry,
    });
    task.start();
    expect(registry.doesExist('interval', 'sweep')).toBe(true);
    void task.runNow();
    let stopped = false;
    const stopping = task.stop().then(() => (stopped = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(registry.doesExist('interval', 'sweep')).toBe(false);
    expect(stopped).toBe(false);
    gate.resolve();
    await stopping;
    expect(stopped).toBe(true);
  });

  it('runs once at start when asked to, and otherwise waits for the first interval', async () => {
    const eager = jest.fn(() => Promise.resolve());
    const lazy = jest.fn(() => Promise.resolve());
    const options = { intervalMs: 60_000, logger, registry };
    const tasks = [
      new PeriodicTask({ ...options, name: 'eager', work: eager, runAtStart: true }),
      new PeriodicTask({ ...options, name: 'lazy', work: lazy }),
    ];
    for (const task of tasks) task.start();
    await Promise.all(tasks.map((task) => task.stop()));
    expect(eager).toHaveBeenCalledTimes(1);
    expect(lazy).not.toHaveBeenCalled();
  });

  /** A task that leaves a run behind after `hungAfterMs`, its logged errors captured afresh. */
  function hungTask(work: () => Promise<void>, hungAfterMs: number): PeriodicTask {
    jest
      .spyOn(logger, 'error')
      .mockImplementation(() => undefined)
      .mockClear();
    return new PeriodicTask({
      name: 'sweep',
      intervalMs: 100,
      work,
      logger,
      registry,
      hungAfterMs,
    });
  }

  it('leaves a run that never settles behind after hungAfterMs, logged, and starts anew', async () => {
    jest.useFakeTimers();
    try {
      const never = new Promise<void>(() => undefined);
      const work = jest
        .fn<Promise<void>, []>()
        .mockReturnValueOnce(never)
        .mockResolvedValueOnce(undefined);
      const task = hungTask(work, 5000);
      const first = task.runNow();
      await jest.advanceTimersByTimeAsync(4999);
      // Still in progress: joined, not started again.
      expect(task.runNow()).toBe(first);
      expect(work).toHaveBeenCalledTimes(1);
      await jest.advanceTimersByTimeAsync(1);
      await first;
      expect(logger.error).toHaveBeenCalledWith(
        'sweep has not finished after 5000 ms: left behind',
      );
      await task.runNow();
      expect(work).toHaveBeenCalledTimes(2);
    } finally {
      jest.useRealTimers();
    }
  });

  it('leaves at most one run behind, and stopping waits for it', async () => {
    jest.useFakeTimers();
    try {
      const gates = [deferred(), deferred()];
      const work = jest
        .fn<Promise<void>, []>()
        .mockReturnValueOnce(gates[0].promise)
        .mockReturnValueOnce(gates[1].promise);
      const task = hungTask(work, 1000);
      const first = task.runNow();
      await jest.advanceTimersByTimeAsync(1000);
      await first; // left behind
      const second = task.runNow();
      await jest.advanceTimersByTimeAsync(5000);
      // The first is still behind: the second hangs too and is joined, not left.
      expect(task.runNow()).toBe(second);
      expect(work).toHaveBeenCalledTimes(2);
      expect(logger.error).toHaveBeenCalledTimes(1);
      let stopped = false;
      const stopping = task.stop().then(() => (stopped = true));
      gates[1].resolve();
      await second;
      await jest.advanceTimersByTimeAsync(0);
      expect(stopped).toBe(false);
      gates[0].resolve();
      await stopping;
      expect(stopped).toBe(true);
    } finally {
      jest.useRealTimers();
    }
  });
});
