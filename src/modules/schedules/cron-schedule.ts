import { Cron } from 'croner';

/** When a schedule fires, in UTC. */
export interface CronSchedule {
  readonly expression: string;
  /** The first tick strictly after `after`; null when the schedule never fires again. */
  nextAfter(after: Date): Date | null;
}

export class CronSyntaxError extends Error {}

const EVERY = /^@every\s+(\S+)$/i;
const DURATION_PART = /(\d+)(h|m|s)/gy;
const UNIT_MS = { h: 3_600_000, m: 60_000, s: 1000 } as const;
const MAX_EXPRESSION_LENGTH = 128;

/**
 * Parses a schedule: a standard 5-field cron expression (minute hour day-of-month month
 * day-of-week, names and ranges allowed, day-of-month and day-of-week OR-ed as in Vixie cron),
 * a descriptor (`@yearly`, `@annually`, `@monthly`, `@weekly`, `@daily`, `@midnight`,
 * `@hourly`), or `@every <duration>` (`90s`, `15m`, `1h30m`; at least 1 s) whose ticks are
 * multiples of the duration since the Unix epoch. Always evaluated in UTC.
 */
export function parseCronSchedule(text: string): CronSchedule {
  const expression = text.trim();
  if (!expression) throw new CronSyntaxError('must not be empty');
  if (expression.length > MAX_EXPRESSION_LENGTH) {
    throw new CronSyntaxError(`must be at most ${MAX_EXPRESSION_LENGTH} characters`);
  }
  const every = EVERY.exec(expression);
  if (every) return everySchedule(expression, parseDuration(every[1]));
  if (/^@reboot$/i.test(expression)) {
    throw new CronSyntaxError('@reboot is not supported; use a cron expression or @every');
  }
  if (expression.startsWith('@every')) {
    throw new CronSyntaxError('@every needs a duration such as 30s, 15m or 1h30m');
  }
  let cron: Cron;
  try {
    cron = new Cron(expression, { mode: '5-part', timezone: 'Etc/UTC' });
  } catch (err) {
    throw new CronSyntaxError(`"${expression}" is not a valid cron expression: ${cronReason(err)}`);
  }
  const schedule: CronSchedule = {
    expression,
    nextAfter: (after) => cron.nextRun(after),
  };
  if (!schedule.nextAfter(new Date())) {
    throw new CronSyntaxError(`"${expression}" never fires (no matching date)`);
  }
  return schedule;
}

function everySchedule(expression: string, periodMs: number): CronSchedule {
  return {
    expression,
    nextAfter: (after) => new Date((Math.floor(after.getTime() / periodMs) + 1) * periodMs),
  };
}

/** A Go-style duration of whole seconds: `45s`, `15m`, `1h30m`. */
function parseDuration(text: string): number {
  DURATION_PART.lastIndex = 0;
  let total = 0;
  let consumed = 0;
  for (let match = DURATION_PART.exec(text); match; match = DURATION_PART.exec(text)) {
    total += Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
    consumed = DURATION_PART.lastIndex;
  }
  if (consumed !== text.length || consumed === 0) {
    throw new CronSyntaxError(
      `"@every ${text}": the duration must look like 30s, 15m or 1h30m (units h, m, s)`,
    );
  }
  if (total < 1000) throw new CronSyntaxError(`"@every ${text}": must be at least 1s`);
  return total;
}

/** croner prefixes its messages with the class name; users need only the reason. */
function cronReason(err: unknown): string {
  return String((err as Error).message ?? err).replace(/^CronPattern:\s*/, '');
}
