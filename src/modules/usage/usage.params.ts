import { ApiError } from '../../common/errors/api-error';
import { optionalEnum, RawQuery, timestampParam } from '../../common/query-params';
import { USAGE_GROUP_BY, UsageGroupBy } from '../runs';

/** The widest range one request may sum over (a little over a year: year-on-year views fit). */
export const MAX_USAGE_RANGE_DAYS = 400;
const DAY_MS = 24 * 60 * 60 * 1000;

export interface UsageParams {
  /** Inclusive. */
  from: Date;
  /** Exclusive. */
  to: Date;
  groupBy: UsageGroupBy;
}

/** The first instant of the UTC calendar month `at` is in. */
export function startOfUtcMonth(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
}

/**
 * Validates the query of GET /usage; a bad value is refused with the parameter named. `to`
 * defaults to now, `from` to the start of `to`'s UTC calendar month, `group_by` to day.
 */
export function parseUsageParams(raw: RawQuery, now: Date): UsageParams {
  const groupBy = optionalEnum(raw, 'group_by', USAGE_GROUP_BY) ?? 'day';
  const to = timestampParam(raw, 'to', 'ceil') ?? now;
  const from = timestampParam(raw, 'from', 'floor') ?? startOfUtcMonth(to);
  if (from.getTime() > to.getTime()) {
    throw ApiError.invalid(
      'from',
      `must not be later than to (${to.toISOString()}); without to, that is now`,
    );
  }
  if (to.getTime() - from.getTime() > MAX_USAGE_RANGE_DAYS * DAY_MS) {
    throw ApiError.invalid(
      'to',
      `the range from ${from.toISOString()} to ${to.toISOString()} is longer than ` +
        `${MAX_USAGE_RANGE_DAYS} days: ask for a shorter one`,
    );
  }
  return { from, to, groupBy };
}
