import { retryDelayMs } from './backoff';

describe('retryDelayMs', () => {
  const policy = { backoffBaseMs: 1000, backoffCapMs: 5000, maxAttempts: 6 };

  it('doubles the delay after each failed attempt, up to the cap', () => {
    expect([1, 2, 3, 4, 5].map((n) => retryDelayMs(policy, n))).toEqual([
      1000, 2000, 4000, 5000, 5000,
    ]);
  });

  it('stops once the last attempt failed', () => {
    expect(retryDelayMs(policy, 6)).toBeNull();
    expect(retryDelayMs({ ...policy, maxAttempts: 1 }, 1)).toBeNull();
  });
});
