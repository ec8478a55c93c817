import { enqueueWithin } from './enqueue-within';

describe('enqueueWithin', () => {
  it('reports an add that settles in time', async () => {
    await expect(enqueueWithin(Promise.resolve('job'))).resolves.toEqual({ state: 'done' });
  });

  it('reports a failed add with its error', async () => {
    const outcome = await enqueueWithin(Promise.reject(new Error('redis down')));
    expect(outcome).toEqual({ state: 'failed', error: new Error('redis down') });
  });

  it('gives up on a slow add, whose later failure is then ignored', async () => {
    let fail!: (err: Error) => void;
    const add = new Promise((_resolve, reject) => {
      fail = reject;
    });
    await expect(enqueueWithin(add, 10)).resolves.toEqual({ state: 'timeout' });
    fail(new Error('too late')); // no unhandled rejection
  });
});
