import { describeDuration } from './approval-expiry.sweeper';

describe('describeDuration', () => {
  it('says a timeout as AMBIENT_BLOCKED_TIMEOUT readers think of it', () => {
    expect(describeDuration(86_400_000)).toBe('24h');
    expect(describeDuration(5_400_000)).toBe('1h30m');
    expect(describeDuration(90_000)).toBe('1m30s');
    expect(describeDuration(2000)).toBe('2s');
  });
});
