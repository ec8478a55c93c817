import Bull from 'bull';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { ThreadedBulkAdder, type BulkAdder, type BulkJob } from './threaded-bulk-adder';

/** Redis as the e2e specs and .ci/run have it; each case uses a prefix of its own. */
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

type Data = { runId: string };

function jobsFor(...runIds: string[]): BulkJob<Data>[] {
  return runIds.map((runId) => ({ name: 'execute', data: { runId }, opts: { jobId: runId } }));
}

describe('ThreadedBulkAdder', () => {
  let queue: Bull.Queue<Data>;
  let adder: ThreadedBulkAdder<Data>;
  let fallbackCalls: string[][];
  let options: Bull.QueueOptions & { url: string };

  beforeEach(() => {
    options = {
      url: REDIS_URL,
      prefix: `adder-spec-${process.pid}-${Date.now()}`,
      defaultJobOptions: { removeOnComplete: true },
    };
    queue = new Bull<Data>('runs', REDIS_URL, options);
    fallbackCalls = [];
    const fallback: BulkAdder<Data> = {
      addBulk: async (jobs) => {
        fallbackCalls.push(jobs.map((job) => job.data.runId));
        return queue.addBulk(jobs);
      },
    };
    adder = new ThreadedBulkAdder<Data>('runs', options, fallback);
  });

  afterEach(async () => {
    await adder.close();
    await queue.obliterate({ force: true });
    await queue.close();
  });

  it('adds jobs from its thread once it is ready, into the same queue with their ids and data', async () => {
    expect(await adder.start()).toBe(true);
    await adder.addBulk(jobsFor('run-1', 'run-2'));
    const [first, second] = await Promise.all([queue.getJob('run-1'), queue.getJob('run-2')]);
    expect(first?.data).toEqual({ runId: 'run-1' });
    expect(second?.data).toEqual({ runId: 'run-2' });
    expect(first?.opts.removeOnComplete).toBe(true);
    expect(await first?.getState()).toBe('waiting');
    expect(fallbackCalls).toEqual([]);
  });

  it('adds through the fallback until the thread is ready, and after it was closed', async () => {
    const starting = adder.start();
    await adder.addBulk(jobsFor('early'));
    expect(fallbackCalls).toEqual([['early']]);
    await starting;
    await adder.close();
    await adder.addBulk(jobsFor('late'));
    expect(fallbackCalls).toEqual([['early'], ['late']]);
    expect((await queue.getJob('late'))?.data).toEqual({ runId: 'late' });
  });

  it('sends the adds of one event-loop turn together, also when closed right after', async () => {
    expect(await adder.start()).toBe(true);
    const adds = [adder.addBulk(jobsFor('turn-1')), adder.addBulk(jobsFor('turn-2', 'turn-3'))];
    const closed = adder.close();
    await Promise.all([...adds, closed]);
    const jobs = await Promise.all(['turn-1', 'turn-2', 'turn-3'].map((id) => queue.getJob(id)));
    expect(jobs.map((job) => job?.data.runId)).toEqual(['turn-1', 'turn-2', 'turn-3']);
    expect(fallbackCalls).toEqual([]);
  });

  it('passes on the error of an add the thread could not do', async () => {
    expect(await adder.start()).toBe(true);
    // Copied to the thread, but Bull cannot store it there (its data is JSON).
    const refused = [{ name: 'execute', data: { runId: 'x', size: 1n }, opts: { jobId: 'x' } }];
    await expect(adder.addBulk(refused as BulkJob<Data>[])).rejects.toThrow(/BigInt/);
    expect(await queue.getJob('x')).toBeNull();
  });

  it('finishes the adds under way before it closes, however slowly Redis answers them', async () => {
    // The thread's Redis connections go through a proxy that holds Redis's answers for a while once
    // a transaction (the add's MULTI … EXEC) was sent: the close, asked for meanwhile, must not
    // end the connection under it (Bull's own close quits and, 500 ms later, disconnects).
    const HOLD_MS = 800;
    const redis = new URL(REDIS_URL);
    const sockets: Socket[] = [];
    const proxy = createServer((client) => {
      const upstream = connect(Number(redis.port || 6379), redis.hostname);
      sockets.push(client, upstream);
      let holdUntil = 0;
      let queued = Promise.resolve();
      client.on('data', (chunk: Buffer) => {
        if (/exec/i.test(chunk.toString('latin1'))) holdUntil = Date.now() + HOLD_MS;
        upstream.write(chunk);
      });
      upstream.on('data', (chunk: Buffer) => {
        const wait = holdUntil - Date.now();
        queued = queued.then(async () => {
          if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
          client.write(chunk);
        });
      });
      const end = () => (client.destroy(), upstream.destroy());
      client.on('error', end).on('close', end);
      upstream.on('error', end).on('close', end);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const port = (proxy.address() as AddressInfo).port;
    await adder.close();
    adder = new ThreadedBulkAdder<Data>(
      'runs',
      { ...options, url: `redis://127.0.0.1:${port}` },
      { addBulk: () => Promise.reject(new Error('no fallback here')) },
    );
    try {
      expect(await adder.start()).toBe(true);
      const added = adder.addBulk(jobsFor('slow-1', 'slow-2'));
      await Promise.all([added, adder.close()]);
      const jobs = await Promise.all(['slow-1', 'slow-2'].map((id) => queue.getJob(id)));
      expect(jobs.map((job) => job?.data.runId)).toEqual(['slow-1', 'slow-2']);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => proxy.close(resolve));
    }
  });
});
