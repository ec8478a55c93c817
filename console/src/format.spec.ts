import { formatDuration, formatRelative, runDurationMs, timelineSteps } from './format';

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

  it('measures a run from its start to its end, or to now while it runs', () => {
    const now = Date.parse('2026-01-01T12:00:00Z');
    expect(runDurationMs({ started_at: null, finished_at: null }, now)).toBeUndefined();
    const started_at = '2026-01-01T11:59:00Z';
    expect(runDurationMs({ started_at, finished_at: '2026-01-01T11:59:30Z' }, now)).toBe(30_000);
    expect(runDurationMs({ started_at, finished_at: null }, now)).toBe(60_000);
  });

  it('makes waterfall steps that last until the next event, the last until the run ended', () => {
    const event = (event_type: string, occurred_at: string) =>
      ({ event_uuid: event_type, event_type, occurred_at, run_id: 'r' }) as Parameters<
        typeof timelineSteps
      >[0][number];
    const events = [
      event('oz_run_created', '2026-01-01T12:00:00Z'),
      event('agent_started', '2026-01-01T12:00:02Z'),
      event('oz_run_failed', '2026-01-01T12:00:10Z'),
    ];
    const now = Date.parse('2026-01-01T13:00:00Z');
    const finished = timelineSteps(events, '2026-01-01T12:00:10Z', now);
    expect(finished.totalMs).toBe(10_000);
    expect(finished.steps.map((step) => step.durationMs)).toEqual([2_000, 8_000, 0]);
    // Still running: the last step lasts until now.
    const running = timelineSteps(events.slice(0, 2), null, Date.parse('2026-01-01T12:00:05Z'));
    expect(running.steps.map((step) => step.durationMs)).toEqual([2_000, 3_000]);
    expect(timelineSteps([], null, now).steps).toEqual([]);
  });
});
