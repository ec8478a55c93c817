import { CronSyntaxError, parseCronSchedule } from './cron-schedule';

const at = (iso: string) => new Date(iso);

describe('parseCronSchedule', () => {
  it('evaluates 5-field expressions in UTC, strictly after the given time', () => {
    const daily9 = parseCronSchedule('0 9 * * *');
    expect(daily9.nextAfter(at('2026-01-01T08:59:59.500Z'))).toEqual(at('2026-01-01T09:00:00Z'));
    expect(daily9.nextAfter(at('2026-01-01T09:00:00Z'))).toEqual(at('2026-01-02T09:00:00Z'));
    expect(parseCronSchedule('*/15 * * * *').nextAfter(at('2026-01-01T00:07:00Z'))).toEqual(
      at('2026-01-01T00:15:00Z'),
    );
    expect(parseCronSchedule('0 10 * * MON').nextAfter(at('2026-01-01T00:00:00Z'))).toEqual(
      at('2026-01-05T10:00:00Z'),
    );
  });

  it('ORs day-of-month and day-of-week like Vixie cron', () => {
    // The 13th, or any Friday: Friday 2 January 2026 comes first.
    expect(parseCronSchedule('0 0 13 * 5').nextAfter(at('2026-01-01T00:00:00Z'))).toEqual(
      at('2026-01-02T00:00:00Z'),
    );
  });

  it('accepts the descriptors', () => {
    const from = at('2026-01-01T00:30:00Z');
    expect(parseCronSchedule('@hourly').nextAfter(from)).toEqual(at('2026-01-01T01:00:00Z'));
    expect(parseCronSchedule('@daily').nextAfter(from)).toEqual(at('2026-01-02T00:00:00Z'));
    expect(parseCronSchedule('@midnight').nextAfter(from)).toEqual(at('2026-01-02T00:00:00Z'));
    expect(parseCronSchedule('@weekly').nextAfter(from)).toEqual(at('2026-01-04T00:00:00Z'));
    expect(parseCronSchedule('@monthly').nextAfter(from)).toEqual(at('2026-02-01T00:00:00Z'));
    expect(parseCronSchedule('@yearly').nextAfter(from)).toEqual(at('2027-01-01T00:00:00Z'));
    expect(parseCronSchedule('@annually').nextAfter(from)).toEqual(at('2027-01-01T00:00:00Z'));
  });

  it('anchors @every durations at the Unix epoch', () => {
    const quarter = parseCronSchedule('@every 15m');
    expect(quarter.nextAfter(at('2026-01-01T10:07:12Z'))).toEqual(at('2026-01-01T10:15:00Z'));
    expect(quarter.nextAfter(at('2026-01-01T10:15:00Z'))).toEqual(at('2026-01-01T10:30:00Z'));
    expect(parseCronSchedule('@every 1h30m').nextAfter(at('1970-01-01T00:00:00Z'))).toEqual(
      at('1970-01-01T01:30:00Z'),
    );
    expect(parseCronSchedule('@every 2s').nextAfter(at('2026-01-01T00:00:01.500Z'))).toEqual(
      at('2026-01-01T00:00:02Z'),
    );
  });

  it.each([
    ['', 'must not be empty'],
    ['0 9 * *', 'not a valid cron expression'],
    ['* * * * * *', 'not a valid cron expression'],
    ['61 * * * *', 'Invalid value for minute'],
    ['0 0 30 2 *', 'never fires'],
    ['@reboot', 'not supported'],
    ['@every', 'needs a duration'],
    ['@every 5x', 'units h, m, s'],
    ['@every 500ms', 'units h, m, s'],
    ['@every 0s', 'at least 1s'],
    ['every day', 'not a valid cron expression'],
  ])('refuses %j (%s)', (expression, reason) => {
    expect(() => parseCronSchedule(expression)).toThrow(CronSyntaxError);
    expect(() => parseCronSchedule(expression)).toThrow(reason);
  });
});
