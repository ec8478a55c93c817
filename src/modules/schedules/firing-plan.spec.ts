import { parseCronSchedule } from './cron-schedule';
import { MISSED_TICKS_CAP, planFiring } from './firing-plan';

const at = (iso: string) => new Date(iso);
const MINUTE = 60_000;
const WINDOW = 5 * MINUTE;

describe('planFiring', () => {
  const hourly = parseCronSchedule('0 * * * *');
  const everyMinute = parseCronSchedule('* * * * *');

  it('fires a tick that is just due and plans the next one', () => {
    const plan = planFiring(
      hourly,
      at('2026-03-01T10:00:00Z'),
      at('2026-03-01T10:00:00.400Z'),
      WINDOW,
    );
    expect(plan).toEqual({
      fireAt: at('2026-03-01T10:00:00Z'),
      missedTicks: 0,
      note: null,
      nextRunAt: at('2026-03-01T11:00:00Z'),
    });
  });

  it('fires a tick missed by less than the catch-up window once', () => {
    const plan = planFiring(hourly, at('2026-03-01T10:00:00Z'), at('2026-03-01T10:04:00Z'), WINDOW);
    expect(plan.fireAt).toEqual(at('2026-03-01T10:00:00Z'));
    expect(plan.missedTicks).toBe(0);
    expect(plan.nextRunAt).toEqual(at('2026-03-01T11:00:00Z'));
  });

  it('skips and notes a tick older than the catch-up window', () => {
    const plan = planFiring(hourly, at('2026-03-01T10:00:00Z'), at('2026-03-01T10:06:00Z'), WINDOW);
    expect(plan.fireAt).toBeNull();
    expect(plan.missedTicks).toBe(1);
    expect(plan.note).toBe(
      '1 tick(s) from 2026-03-01T10:00:00.000Z were missed while no scheduler was running and ' +
        'are older than the 300s catch-up window: skipped',
    );
    expect(plan.nextRunAt).toEqual(at('2026-03-01T11:00:00Z'));
  });

  it('coalesces several missed ticks into one firing of the latest (no burst)', () => {
    const plan = planFiring(
      everyMinute,
      at('2026-03-01T10:00:00Z'),
      at('2026-03-01T10:03:30Z'),
      WINDOW,
    );
    expect(plan.fireAt).toEqual(at('2026-03-01T10:03:00Z'));
    expect(plan.missedTicks).toBe(3);
    expect(plan.note).toContain('fired once for 2026-03-01T10:03:00.000Z');
    expect(plan.nextRunAt).toEqual(at('2026-03-01T10:04:00Z'));
  });

  it('after a long outage fires the latest tick inside the window and counts the rest', () => {
    const plan = planFiring(
      everyMinute,
      at('2026-03-01T08:00:00Z'),
      at('2026-03-01T10:00:30Z'),
      WINDOW,
    );
    expect(plan.fireAt).toEqual(at('2026-03-01T10:00:00Z'));
    expect(plan.missedTicks).toBe(120);
  });

  it('caps the count of missed ticks', () => {
    const perSecond = parseCronSchedule('@every 1s');
    const plan = planFiring(perSecond, at('2026-03-01T00:00:00Z'), at('2026-03-02T00:00:00Z'), 0);
    expect(plan.missedTicks).toBe(MISSED_TICKS_CAP);
    expect(plan.note).toContain(`${MISSED_TICKS_CAP} or more ticks`);
    expect(plan.fireAt).toEqual(at('2026-03-02T00:00:00Z'));
  });

  it('with a zero window fires only a tick that is exactly due', () => {
    const plan = planFiring(hourly, at('2026-03-01T10:00:00Z'), at('2026-03-01T10:00:01Z'), 0);
    expect(plan.fireAt).toBeNull();
    expect(plan.missedTicks).toBe(1);
  });
});
