import { isoDuration, parseRfc3339, settlesWithin } from './time';

describe('time helpers', () => {
  it.each([
    [0, 'PT0S'],
    [150_000, 'PT2M30S'],
    [3_600_000, 'PT1H'],
    [3_725_000, 'PT1H2M5S'],
    [884, 'PT0.884S'],
    [62_500, 'PT1M2.5S'],
    [3_600_040, 'PT1H0.04S'],
  ])('formats %d ms as %s', (ms, text) => {
    expect(isoDuration(ms)).toBe(text);
  });

  it('parses RFC 3339 and refuses other formats', () => {
    expect(parseRfc3339('2026-01-02T03:04:05.678Z')?.toISOString()).toBe(
      '2026-01-02T03:04:05.678Z',
    );
    expect(parseRfc3339('2026-01-02T05:04:05+02:00')?.toISOString()).toBe(
      '2026-01-02T03:04:05.000Z',
    );
    expect(parseRfc3339('2024-02-29T23:59:59Z')?.toISOString()).toBe('2024-02-29T23:59:59.000Z');
    for (const bad of [
      '2026-01-02',
      'yesterday',
      '2026-13-02T03:04:05Z',
      '1700000000',
      '2026-02-30T00:00:00Z',
      '2026-04-31T00:00:00Z',
      '2025-02-29T00:00:00Z',
    ]) {
      expect(parseRfc3339(bad)).toBeNull();
    }
  });

  describe('settlesWithin', () => {
    beforeEach(() => jest.useFakeTimers());
    afterEach(() => jest.useRealTimers());

    it('says whether the work settled, either way, before the time ran out', async () => {
      expect(await settlesWithin(Promise.resolve('done'), 1000)).toBe(true);
      expect(await settlesWithin(Promise.reject(new Error('refused')), 1000)).toBe(true);
      const late = settlesWithin(new Promise(() => undefined), 1000);
      await jest.advanceTimersByTimeAsync(999);
      let answered = false;
      void late.then(() => (answered = true));
      await jest.advanceTimersByTimeAsync(0);
      expect(answered).toBe(false);
      await jest.advanceTimersByTimeAsync(1);
      expect(await late).toBe(false);
      expect(jest.getTimerCount()).toBe(0);
    });
  });
});
