import { Worker } from 'node:worker_threads';
import type { JobOptions, QueueOptions } from 'bull';

/** One job for Bull's `addBulk`: plain data, copied to the thread. */
export interface BulkJob<T> {
  name: string;
  data: T;
  opts?: JobOptions;
}

/** What adds jobs to a queue: Bull's own Queue, or a ThreadedBulkAdder. */
export interface BulkAdder<T> {
  addBulk(jobs: BulkJob<T>[]): Promise<unknown>;
}

type Reply = { id: number; error?: string };

interface Waiting<T> {
  jobs: BulkJob<T>[];
  resolve(): void;
  reject(error: Error): void;
}

/**
 * The thread's program: one Bull queue of its own (same Redis, prefix and job defaults as the
 * process's), adding what it is sent. Bull is required by the path the main thread resolved, so
 * it does not depend on the working directory.
 */
const ADDER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Bull = require(workerData.bull);
const { name, options } = workerData;
const queue = options.url ? new Bull(name, options.url, options) : new Bull(name, options);
queue.on('error', () => undefined);
// Adds under way: a close waits for them (closing the queue would fail those still waiting for
// its connection with "Connection is closed").
const adding = new Set();
parentPort.on('message', (message) => {
  if (message === 'close') {
    Promise.allSettled([...adding])
      .then(() => queue.close())
      .catch(() => undefined)
      .finally(() => process.exit(0));
    return;
  }
  const added = queue.addBulk(message.jobs).then(
    () => parentPort.postMessage({ id: message.id }),
    (error) => parentPort.postMessage({ id: message.id, error: String((error && error.message) || error) }),
  );
  adding.add(added);
  added.finally(() => adding.delete(added));
});
parentPort.postMessage('ready');
`;

/** How long close() waits for the thread to close its Redis connections before it stops it. */
const CLOSE_TIMEOUT_MS = 2000;

/**
 * Adds Bull jobs from a worker thread of its own: building a job, its Lua script call and the
 * Redis pipeline cost the API's main thread ≈ 40 µs per run created, about a tenth of a
 * creation (docs/PERFORMANCE.md). Until the thread is ready, and for good if it fails, jobs are
 * added by `fallback` (the process's own queue) instead, so none waits for the thread.
 */
export class ThreadedBulkAdder<T> implements BulkAdder<T> {
  private worker: Worker | null = null;
  private ready = false;
  private nextId = 0;
  private started: Promise<boolean> | null = null;
  /** Adds asked for since the last message: sent together once the event loop turns. */
  private outbox: Waiting<T>[] = [];
  /** Messages sent, by id, with the adds they carry. */
  private readonly pending = new Map<number, Waiting<T>[]>();

  constructor(
    private readonly name: string,
    private readonly options: QueueOptions & { url?: string },
    private readonly fallback: BulkAdder<T>,
  ) {}

  /**
   * Starts the thread; jobs go through `fallback` until it says it is ready. Resolves true once
   * it is, false if it failed first.
   */
  start(): Promise<boolean> {
    this.started ??= new Promise<boolean>((resolve) => this.startThread(resolve));
    return this.started;
  }

  private startThread(settled: (ready: boolean) => void): void {
    const worker = new Worker(ADDER_SOURCE, {
      eval: true,
      workerData: { bull: require.resolve('bull'), name: this.name, options: this.options },
    });
    // The process may exit while the thread idles.
    worker.unref();
    worker.on('message', (message: 'ready' | Reply) => {
      if (message === 'ready') {
        this.ready = true;
        settled(true);
        return;
      }
      const sent = this.pending.get(message.id) ?? [];
      this.pending.delete(message.id);
      const error = message.error === undefined ? null : new Error(message.error);
      for (const waiting of sent) {
        if (error) waiting.reject(error);
        else waiting.resolve();
      }
    });
    const fail = (error: Error): void => {
      settled(false);
      this.ready = false;
      this.worker = null;
      for (const waiting of [...this.pending.values()].flat()) waiting.reject(error);
      this.pending.clear();
      // Not sent yet: the process's queue adds them.
      this.addByFallback(this.outbox.splice(0));
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`the enqueue thread exited with code ${code}`)));
    this.worker = worker;
  }

  /**
   * Adds the jobs; the adds asked for in one turn of the event loop (a packed creation batch's
   * runs) go to the thread in one message, answered together: a message costs the main thread
   * more than a job. One job Bull refuses fails the others of its message too.
   */
  addBulk(jobs: BulkJob<T>[]): Promise<void> {
    if (!this.worker || !this.ready) return this.fallback.addBulk(jobs).then(() => undefined);
    return new Promise<void>((resolve, reject) => {
      this.outbox.push({ jobs, resolve, reject });
      if (this.outbox.length === 1) setImmediate(() => this.send());
    });
  }

  private send(): void {
    const sending = this.outbox.splice(0);
    if (sending.length === 0) return;
    const worker = this.worker;
    if (!worker) return this.addByFallback(sending);
    const id = this.nextId++;
    this.pending.set(id, sending);
    worker.postMessage({ id, jobs: sending.flatMap((waiting) => waiting.jobs) });
  }

  private addByFallback(waitings: Waiting<T>[]): void {
    for (const waiting of waitings) {
      this.fallback.addBulk(waiting.jobs).then(waiting.resolve, waiting.reject);
    }
  }

  /** Lets the thread finish what it was sent and close its queue; stops it after a while. */
  async close(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    // What was asked for before the close still goes, ahead of it.
    this.send();
    this.ready = false;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage('close');
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_TIMEOUT_MS)));
    await Promise.race([exited, late]);
    clearTimeout(timer);
    await worker.terminate();
  }
}
