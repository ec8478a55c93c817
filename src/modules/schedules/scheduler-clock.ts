/** Where schedules read the time. Tests replace it to play out missed ticks without waiting. */
export interface SchedulerClock {
  now(): Date;
}

export const SCHEDULER_CLOCK = Symbol('SCHEDULER_CLOCK');

export const systemClock: SchedulerClock = { now: () => new Date() };
