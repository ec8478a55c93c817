import Bull from 'bull';
import { fake } from '../../../test/support/unit/fake';
import type { AppConfig } from '../../config/app-config';
import { ExecuteJobData, EXECUTE_JOB, RunQueue, RUNS_QUEUE } from './run-queue.service';
import { RunSignals } from './run-signals.service';

/** Redis as the e2e specs and .ci/run have it; each case uses a prefix of its own. */
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * RunQueue.ensureJob against a real Redis, in the states a worker can leave a run's job in. A
 * worker takes a job in two steps (BRPOPLPUSH to the active list, then `moveToActive`, which locks
 * it and sets `processedOn`); the specs stand in for those steps.
 */
describe('RunQueue.ensureJob', () => {
  let queue: Bull.Queue<ExecuteJobData>;
  let runQueue: RunQueue;

  beforeEach(() => {
    const prefix = `run-queue-spec-${process.pid}-${Date.now()}`;
    queue = new Bull<ExecuteJobData>(RUNS_QUEUE, REDIS_URL, {
      prefix,
      defaultJobOptions: { removeOnComplete: true, removeOnFail: true, attempts: 1 },
    });
    // A worker's RunQueue adds through the queue itself (no thread of its own).
    const config = { roles: ['worker'] } as unknown as AppConfig;
    runQueue = new RunQueue(queue, fake<RunSignals>(), config);
  });

  afterEach(async () => {
    await runQueue.onModuleDestroy();
    await queue.obliterate({ force: true });
    await queue.close();
  });

  /** The first step of a worker's take: the job in the active list, not locked yet. */
  const takenFromWait = () => queue.client.rpoplpush(queue.toKey('wait'), queue.toKey('active'));
  /** The second step: locked, `processedOn` set (Bull's own script, as its worker calls it). */
  const locked = (runId: string) =>
    (queue as unknown as { moveToActive(jobId: string): Promise<unknown> }).moveToActive(runId);

  it('adds the job of a run that has none', async () => {
    expect(await runQueue.ensureJob('run-none')).toBe(true);
    const job = await queue.getJob('run-none');
    expect(job?.name).toBe(EXECUTE_JOB);
    expect(await job?.getState()).toBe('waiting');
  });

  it('leaves a waiting job alone', async () => {
    await runQueue.enqueue('run-waiting');
    expect(await runQueue.ensureJob('run-waiting')).toBe(false);
    expect(await (await queue.getJob('run-waiting'))?.getState()).toBe('waiting');
  });

  it('leaves a job a worker is taking alone, so that the worker gets it whole', async () => {
    await runQueue.enqueue('run-taken');
    expect(await takenFromWait()).toBe('run-taken');
    expect(await runQueue.ensureJob('run-taken')).toBe(false);
    await locked('run-taken');
    // Removed between the two steps, the job was written again as a bare `processedOn` in no
    // list: never executed, and every later add of the run's id a no-op.
    const job = await queue.getJob('run-taken');
    expect(job?.name).toBe(EXECUTE_JOB);
    expect(job?.data).toEqual({ runId: 'run-taken' });
    expect(await job?.getState()).toBe('active');
  });

  it('replaces a job left in no list (a removal that raced a worker), which an add cannot', async () => {
    await queue.client.hset(queue.toKey('run-left'), 'processedOn', String(Date.now()));
    await runQueue.enqueue('run-left');
    expect(await (await queue.getJob('run-left'))?.getState()).toBe('stuck');
    expect(await runQueue.ensureJob('run-left')).toBe(true);
    const job = await queue.getJob('run-left');
    expect(job?.data).toEqual({ runId: 'run-left' });
    expect(await job?.getState()).toBe('waiting');
  });

  it("leaves a dead worker's job to Bull's stalled-job check, which gives it back whole", async () => {
    await runQueue.enqueue('run-dead');
    await takenFromWait();
    await locked('run-dead');
    await queue.client.del(queue.toKey('run-dead:lock'));
    expect(await runQueue.ensureJob('run-dead')).toBe(false);
    // What every worker's queue runs each stalledInterval (the run's lease): a job unlocked at
    // one check and still unlocked at the next goes back to wait.
    const check = queue as unknown as { moveUnlockedJobsToWait(): Promise<unknown> };
    for (let pass = 0; pass < 2; pass++) {
      await queue.client.del(queue.toKey('stalled-check'));
      await check.moveUnlockedJobsToWait();
    }
    const job = await queue.getJob('run-dead');
    expect(await job?.getState()).toBe('waiting');
    expect(job?.data).toEqual({ runId: 'run-dead' });
    // Taken again after the stall (its old processedOn kept): still left alone mid-take.
    await takenFromWait();
    expect(await runQueue.ensureJob('run-dead')).toBe(false);
    await locked('run-dead');
    expect((await queue.getJob('run-dead'))?.name).toBe(EXECUTE_JOB);
  });

  it('replaces a job a failed execution left', async () => {
    await runQueue.enqueue('run-failed');
    await takenFromWait();
    await locked('run-failed');
    const job = await queue.getJob('run-failed');
    await job!.moveToFailed({ message: 'crashed' }, true);
    expect(await runQueue.ensureJob('run-failed')).toBe(true);
    expect(await (await queue.getJob('run-failed'))?.getState()).toBe('waiting');
  });
});
