import type { CronSchedule } from './cron-schedule';

/** How many missed ticks the scheduler counts one by one before it says "at least". */
export const MISSED_TICKS_CAP = 1000;

export interface FiringPlan {
  /** The tick to fire now, or null when every missed tick is older than the catch-up window. */
  fireAt: Date | null;
  /** Due ticks that do not fire: missed while no scheduler ran (coalesced or too old). */
  missedTicks: number;
  /** What happened to the missed ticks, for `last_spawn_error`; null when none was missed. */
  note: string | null;
  /** The first tick after now; null when the schedule never fires again. */
  nextRunAt: Date | null;
}

/**
 * Decides what a due schedule does now. A tick is normally fired as it comes. Ticks missed
 * while no scheduler was running (or it fell behind) fire once, as the latest of them, if
 * that one is within the catch-up window; older ones are skipped and noted. There is never a
 * burst of runs for missed ticks.
 */
export function planFiring(
  schedule: CronSchedule,
  dueAt: Date,
  now: Date,
  catchUpWindowMs: number,
): FiringPlan {
  const windowStart = new Date(now.getTime() - catchUpWindowMs);
  let fireAt: Date | null =
    dueAt >= windowStart ? dueAt : schedule.nextAfter(new Date(windowStart.getTime() - 1));
  if (fireAt && fireAt > now) fireAt = null;
  for (let next = fireAt && schedule.nextAfter(fireAt); next && next <= now;) {
    fireAt = next;
    next = schedule.nextAfter(next);
  }
  const missedTicks = countTicks(schedule, dueAt, fireAt ?? new Date(now.getTime() + 1));
  return {
    fireAt,
    missedTicks,
    note: missedNote(dueAt, fireAt, missedTicks, catchUpWindowMs),
    nextRunAt: schedule.nextAfter(now),
  };
}

/** Ticks in [from, before), counted up to MISSED_TICKS_CAP. */
function countTicks(schedule: CronSchedule, from: Date, before: Date): number {
  let count = 0;
  for (let t: Date | null = from; t && t < before && count < MISSED_TICKS_CAP; count++) {
    t = schedule.nextAfter(t);
  }
  return count;
}

function missedNote(
  dueAt: Date,
  fireAt: Date | null,
  missed: number,
  windowMs: number,
): string | null {
  if (missed === 0) return null;
  const count =
    missed >= MISSED_TICKS_CAP ? `${MISSED_TICKS_CAP} or more ticks` : `${missed} tick(s)`;
  const since = `from ${dueAt.toISOString()}`;
  if (!fireAt) {
    return (
      `${count} ${since} were missed while no scheduler was running and are older than the ` +
      `${Math.round(windowMs / 1000)}s catch-up window: skipped`
    );
  }
  return `${count} ${since} were missed while no scheduler was running; fired once for ${fireAt.toISOString()}`;
}
