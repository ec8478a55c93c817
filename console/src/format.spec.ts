import { formatDuration, formatRelative, parseIsoDuration, runDurationMs } from './format';

describe('console time formats', () => {
  it('says a length in the largest units that matter', () => {
    expect(formatDuration(350)).toBe('350 ms');
    expect(formatDuration(45_000)).toBe('45 s');
    expect(formatDuration(200_000)).toBe('3 min 20 s');
    expect(formatDuration(180_000)).toBe('3 min');
    expect(formatDuration(7_500_000)).toBe('2 h 5 min');
    expect(formatDuration(-1)).toBe('—');
  });

  it('says how long ago or how soon, relative to now', () => {
    const now = Date.parse('2026-01-01T12:00:00Z');
    expect(formatRelative(new Date(now - 3_000), now)).toBe('just now');
    expect(formatRelative(new Date(now - 180_000), now)).toBe('3 min ago');
    expect(formatRelative(new Date(now + 7_200_000), now)).toBe('in 2 h');
    expect(formatRelative(new Date(now - 5 * 86_400_000), now)).toBe('5 d ago');
  });

  it('reads the API’s ISO-8601 durations, to the millisecond', () => {
    expect(parseIsoDuration('PT2M30S')).toBe(150_000);
    expect(parseIsoDuration('PT0.884S')).toBe(884);
    expect(parseIsoDuration('PT1H0.04S')).toBe(3_600_040);
    expect(parseIsoDuration('P1DT1H')).toBe(90_000_000);
    expect(parseIsoDuration('PT')).toBeUndefined();
    expect(parseIsoDuration('2 min')).toBeUndefined();
    expect(parseIsoDuration(undefined)).toBeUndefined();
  });

  it('measures a run by its executions, moving on from the read while one runs', () => {
    const now = Date.parse('2026-01-01T12:00:10Z');
    const readAt = Date.parse('2026-01-01T12:00:04Z');
    expect(runDurationMs({ state: 'QUEUED' }, now, readAt)).toBeUndefined();
    // Ended executions: what the API said, however long ago it was read.
    expect(runDurationMs({ state: 'SUCCEEDED', run_time: 'PT30S' }, now, readAt)).toBe(30_000);
    expect(runDurationMs({ state: 'QUEUED', run_time: 'PT30S' }, now, readAt)).toBe(30_000);
    // Running: plus the 6 s since the read.
    expect(runDurationMs({ state: 'INPROGRESS', run_time: 'PT30S' }, now, readAt)).toBe(36_000);
  });
});
