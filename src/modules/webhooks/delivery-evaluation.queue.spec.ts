import type { Queue } from 'bull';
import { AsyncLocalStorage } from 'node:async_hooks';
import {
  DeliveryEvaluationQueue,
  DeliveryKey,
  EVALUATE_JOB,
  EvaluateJobData,
  MIN_JOB_INTERVAL_MS,
} from './delivery-evaluation.queue';

interface AddedJob {
  name: string;
  keys: DeliveryKey[];
  at: number;
}

/** Stands for the trace context (OpenTelemetry keeps it in an AsyncLocalStorage as well). */
const trace = new AsyncLocalStorage<string>();

/** A Bull queue that records its jobs (and when, on the test's clock). */
function recordingQueue(fail?: (call: number) => boolean) {
  const jobs: AddedJob[] = [];
  let calls = 0;
  const queue = {
    add(name: string, data: EvaluateJobData) {
      calls += 1;
      const job = { name, keys: 'keys' in data ? data.keys : [], at: performance.now() };
      jobs.push(job);
      return fail?.(calls) ? Promise.reject(new Error('redis is down')) : Promise.resolve({});
    },
  };
  return { queue: queue as unknown as Queue<EvaluateJobData>, jobs };
}

const key = (n: number): DeliveryKey => ({ webhookId: 'wh', deliveryId: `d${n}` });

describe('DeliveryEvaluationQueue.enqueueSoon (the ingress hand-off)', () => {
  // The clock only moves when a test moves it: what happens within the interval is exact.
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());
  const turn = () => jest.advanceTimersByTimeAsync(0);

  it('sends a delivery after a quiet spell on the next turn, in a job of its own', async () => {
    const { queue, jobs } = recordingQueue();
    const evaluations = new DeliveryEvaluationQueue(queue);
    evaluations.enqueueSoon([key(1)]);
    expect(jobs).toHaveLength(0);
    await turn();
    expect(jobs).toEqual([{ name: EVALUATE_JOB, keys: [key(1)], at: performance.now() }]);
  });

  it('gathers what comes within the interval after a job into one job, sent when it ends', async () => {
    const { queue, jobs } = recordingQueue();
    const evaluations = new DeliveryEvaluationQueue(queue);
    evaluations.enqueueSoon([key(1)]);
    await turn();
    const firstAt = performance.now();
    evaluations.enqueueSoon([key(2), key(3)]);
    await jest.advanceTimersByTimeAsync(MIN_JOB_INTERVAL_MS / 2);
    evaluations.enqueueSoon([key(4)]);
    await jest.advanceTimersByTimeAsync(MIN_JOB_INTERVAL_MS / 2 - 1);
    evaluations.enqueueSoon([key(5)]);
    expect(jobs).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(1);
    expect(jobs).toHaveLength(2);
    expect(jobs[1]).toEqual({
      name: EVALUATE_JOB,
      keys: [key(2), key(3), key(4), key(5)],
      at: firstAt + MIN_JOB_INTERVAL_MS,
    });
    // After another quiet spell, at once again.
    await jest.advanceTimersByTimeAsync(MIN_JOB_INTERVAL_MS * 5);
    evaluations.enqueueSoon([key(6)]);
    await turn();
    expect(jobs.map((j) => j.keys)).toEqual([[key(1)], [key(2), key(3), key(4), key(5)], [key(6)]]);
  });

  it('splits a large backlog into jobs of at most 200 deliveries, none lost', async () => {
    const { queue, jobs } = recordingQueue();
    const evaluations = new DeliveryEvaluationQueue(queue);
    const keys = Array.from({ length: 450 }, (_, i) => key(i));
    evaluations.enqueueSoon(keys);
    await jest.advanceTimersByTimeAsync(MIN_JOB_INTERVAL_MS * 3);
    expect(jobs.map((j) => j.keys.length)).toEqual([200, 200, 50]);
    expect(jobs.flatMap((j) => j.keys)).toEqual(keys);
  });

  it('sends each job in the context of the first delivery it carries (its trace)', async () => {
    const contexts: (string | undefined)[] = [];
    let finishFirst = () => {};
    const queue = {
      add() {
        contexts.push(trace.getStore());
        return contexts.length === 1
          ? new Promise<void>((resolve) => (finishFirst = resolve))
          : Promise.resolve();
      },
    } as unknown as Queue<EvaluateJobData>;
    const evaluations = new DeliveryEvaluationQueue(queue);
    trace.run('delivery 1', () => evaluations.enqueueSoon([key(1)]));
    await turn();
    // Come while the first job is still being added: they go when it ends.
    trace.run('delivery 2', () => evaluations.enqueueSoon([key(2)]));
    trace.run('delivery 3', () => evaluations.enqueueSoon([key(3)]));
    finishFirst();
    await jest.advanceTimersByTimeAsync(MIN_JOB_INTERVAL_MS);
    expect(contexts).toEqual(['delivery 1', 'delivery 2']);
  });

  it('goes on with later deliveries after Redis refused a job (the sweeper has that one)', async () => {
    const { queue, jobs } = recordingQueue((call) => call === 1);
    const evaluations = new DeliveryEvaluationQueue(queue);
    const warn = jest
      .spyOn((evaluations as unknown as { logger: { warn(m: string): void } }).logger, 'warn')
      .mockImplementation(() => undefined);
    evaluations.enqueueSoon([key(1)]);
    await turn();
    expect(warn).toHaveBeenCalledWith('enqueue of 1 deliveries failed; the sweeper will retry');
    evaluations.enqueueSoon([key(2)]);
    await jest.advanceTimersByTimeAsync(MIN_JOB_INTERVAL_MS);
    expect(jobs.map((j) => j.keys)).toEqual([[key(1)], [key(2)]]);
  });
});
