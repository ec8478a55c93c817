import { getQueueToken } from '@nestjs/bull';
import { Injectable, Logger, Provider } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import type { Job } from 'bull';
import { APP_CONFIG, AppConfig, Role } from '../../config/app-config';
import { CONSUMED_QUEUES, ConsumedQueue } from './consumed-queues';
import { QueueProcessor, QueueProcessorHooks } from './queue-processor.decorator';
import { QueueProcessorExplorer } from './queue-processor.explorer';

type Listener = (...args: unknown[]) => void;

/** Records what the explorer asks of a Bull queue. */
class RecordingQueue {
  readonly name = 'jobs';
  readonly processors: { job: string; concurrency: number; fn: (job: Job) => Promise<unknown> }[] =
    [];
  readonly listeners = new Map<string, Listener[]>();
  readonly pauses: [boolean, boolean][] = [];

  process(job: string, concurrency: number, fn: (job: Job) => Promise<unknown>): Promise<void> {
    this.processors.push({ job, concurrency, fn });
    return new Promise(() => undefined);
  }

  on(event: string, listener: Listener): this {
    this.listeners.set(event, [...(this.listeners.get(event) ?? []), listener]);
    return this;
  }

  emit(event: string, ...args: unknown[]): void {
    for (const listener of this.listeners.get(event) ?? []) listener(...args);
  }

  pause(isLocal: boolean, doNotWaitActive: boolean): Promise<void> {
    this.pauses.push([isLocal, doNotWaitActive]);
    return Promise.resolve();
  }
}

const JOBS: ConsumedQueue = { queue: 'jobs', job: 'work', role: 'worker' };

@Injectable()
class Worker implements QueueProcessorHooks {
  readonly completed: unknown[] = [];

  @QueueProcessor<{ n: number }>('jobs', {
    job: 'work',
    role: 'worker',
    concurrency: (config) => config.runs.workerConcurrency,
  })
  handle(job: Job<{ n: number }>): Promise<number> {
    return Promise.resolve(job.data.n * 2);
  }

  jobCompleted(_job: unknown, result: unknown): void {
    this.completed.push(result);
  }
}

@Injectable()
class SecondWorker {
  @QueueProcessor('jobs', { job: 'work', role: 'worker', concurrency: () => 1 })
  handle(): Promise<void> {
    return Promise.resolve();
  }
}

@Injectable()
class SlowWorker {
  finish: () => void = () => undefined;

  @QueueProcessor('jobs', { job: 'work', role: 'worker', concurrency: () => 1 })
  handle(): Promise<void> {
    return new Promise((resolve) => (this.finish = resolve));
  }
}

@Injectable()
class DrainingWorker implements QueueProcessorHooks {
  drained = false;

  @QueueProcessor('jobs', { job: 'work', role: 'worker', concurrency: () => 1 })
  handle(): Promise<void> {
    return Promise.resolve();
  }

  drain(): Promise<void> {
    this.drained = true;
    return Promise.resolve();
  }
}

async function start(
  roles: Role[],
  processors: Provider[],
  options: { consumed?: ConsumedQueue[]; queue?: RecordingQueue | null } = {},
) {
  const queue = options.queue === undefined ? new RecordingQueue() : options.queue;
  const config = { roles, runs: { workerConcurrency: 3 } } as unknown as AppConfig;
  const moduleRef = await Test.createTestingModule({
    imports: [DiscoveryModule],
    providers: [
      { provide: APP_CONFIG, useValue: config },
      { provide: CONSUMED_QUEUES, useValue: options.consumed ?? [JOBS] },
      ...(queue ? [{ provide: getQueueToken('jobs'), useValue: queue }] : []),
      ...processors,
      QueueProcessorExplorer,
    ],
  }).compile();
  return { app: moduleRef, queue, init: () => moduleRef.init() };
}

describe('QueueProcessorExplorer', () => {
  beforeEach(() => {
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
  });
  afterEach(() => jest.restoreAllMocks());

  it('registers the decorated method with the worker role, concurrency from the config', async () => {
    const { app, queue, init } = await start(['worker'], [Worker]);
    await init();
    expect(queue!.processors.map(({ job, concurrency }) => ({ job, concurrency }))).toEqual([
      { job: 'work', concurrency: 3 },
    ]);
    // The registered function runs the method (in its span) and hands back its result.
    await expect(queue!.processors[0].fn({ id: '1', data: { n: 21 } } as Job)).resolves.toBe(42);
    expect(queue!.listeners.get('error')).toHaveLength(1);
    queue!.emit('completed', { name: 'work', data: {} }, 42);
    queue!.emit('completed', { name: 'other', data: {} }, 7);
    expect(app.get(Worker).completed).toEqual([42]);
    await app.close();
  });

  it('fails start-up on a job with two processors, naming the queue', async () => {
    const { app, init } = await start(['worker'], [Worker, SecondWorker]);
    await expect(init()).rejects.toThrow(
      'queue "jobs": two processors of job "work" (Worker.handle and SecondWorker.handle)',
    );
    await app.close();
  });

  it('fails start-up when the worker role has no processor of a queue it consumes', async () => {
    const { app, queue, init } = await start(['worker'], [Worker], {
      consumed: [JOBS, { queue: 'jobs', job: 'other', role: 'worker' }],
    });
    await expect(init()).rejects.toThrow(
      'queue "jobs": no processor of job "other" (the worker role consumes it)',
    );
    expect(queue!.processors).toEqual([]);
    await app.close();
  });

  it('fails start-up when a processor names a queue nobody registered', async () => {
    const { app, init } = await start(['worker'], [Worker], { queue: null });
    await expect(init()).rejects.toThrow(
      'queue "jobs": has a processor but is not registered with BullModule',
    );
    await app.close();
  });

  it('registers no handler in a process without the role, and needs none', async () => {
    const { app, queue, init } = await start(['api', 'scheduler'], [Worker]);
    await init();
    expect(queue!.processors).toEqual([]);
    expect(queue!.listeners.size).toBe(0);
    await app.close();
    expect(queue!.pauses).toEqual([]);
  });

  it('at shutdown pauses the queue locally and waits for the jobs its handlers are running', async () => {
    const { app, queue, init } = await start(['worker'], [SlowWorker]);
    await init();
    const worker = app.get(SlowWorker);
    const running = queue!.processors[0].fn({ name: 'work', data: {} } as Job);
    let closed = false;
    const closing = app.close().then(() => (closed = true));
    await new Promise((r) => setImmediate(r));
    // Bull is not asked to wait (its wait includes its blocking fetch loop): the job is.
    expect(queue!.pauses).toEqual([[true, true]]);
    expect(closed).toBe(false);
    worker.finish();
    await running;
    await closing;
    expect(closed).toBe(true);
  });

  it("at shutdown lets a processor's drain end its running jobs", async () => {
    const { app, queue, init } = await start(['worker'], [DrainingWorker]);
    await init();
    await app.close();
    expect(queue!.pauses).toEqual([[true, true]]);
    expect(app.get(DrainingWorker).drained).toBe(true);
  });
});
