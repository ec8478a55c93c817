import { Backoff } from './backoff';

describe('Backoff', () => {
  it('starts at 1 s, doubles and stays at 60 s', () => {
    const backoff = new Backoff();
    const delays = Array.from({ length: 9 }, () => backoff.next());
    expect(delays).toEqual([1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000, 60_000]);
  });

  it('starts over after a successful dial', () => {
    const backoff = new Backoff();
    backoff.next();
    backoff.next();
    backoff.reset();
    expect(backoff.next()).toBe(1000);
  });
});
