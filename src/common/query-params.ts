import { ApiError } from './errors/api-error';
import { parseRfc3339 } from './time';

/** An Express query object as a list endpoint receives it. */
export type RawQuery = Record<string, unknown>;

const MAX_FILTER_LENGTH = 1024;

/** Every value given for `name`; an empty string counts as not given. */
export function queryValues(raw: RawQuery, name: string): string[] {
  const value = raw[name];
  if (value === undefined || value === null) return [];
  const list = Array.isArray(value) ? value : [value];
  for (const item of list) {
    if (typeof item !== 'string') throw ApiError.invalid(name, 'must be a plain string value');
  }
  return (list as string[]).filter((item) => item !== '');
}

export function singleValue(raw: RawQuery, name: string): string | undefined {
  const list = queryValues(raw, name);
  if (list.length > 1) throw ApiError.invalid(name, 'must be given at most once');
  return list[0];
}

function quote(value: string): string {
  return JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value);
}

export function checkEnum<T extends string>(name: string, value: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value)) {
    throw ApiError.invalid(name, `must be one of ${allowed.join(', ')} (got ${quote(value)})`);
  }
  return value as T;
}

export function optionalEnum<T extends string>(
  raw: RawQuery,
  name: string,
  allowed: readonly T[],
): T | undefined {
  const value = singleValue(raw, name);
  return value === undefined ? undefined : checkEnum(name, value, allowed);
}

export function enumList<T extends string>(
  raw: RawQuery,
  name: string,
  allowed: readonly T[],
): T[] | undefined {
  const list = queryValues(raw, name).map((value) => checkEnum(name, value, allowed));
  return list.length ? [...new Set(list)] : undefined;
}

/** A page size: `fallback` when not given, else an integer from 1 to `max`. */
export function pageLimit(text: string | undefined, fallback: number, max: number): number {
  if (text === undefined) return fallback;
  const n = /^\d{1,6}$/.test(text) ? Number(text) : NaN;
  if (!(n >= 1 && n <= max)) {
    throw ApiError.invalid('limit', `must be an integer from 1 to ${max}`);
  }
  return n;
}

export function filterText(raw: RawQuery, name: string): string | undefined {
  const value = singleValue(raw, name);
  if (value !== undefined && value.length > MAX_FILTER_LENGTH) {
    throw ApiError.invalid(name, `must be at most ${MAX_FILTER_LENGTH} characters`);
  }
  return value;
}

/**
 * Stored timestamps have millisecond precision; a bound with finer digits is rounded so that the
 * strict comparison keeps its meaning (`after` rounds down, `before` rounds up).
 */
export function timestampParam(
  raw: RawQuery,
  name: string,
  rounding: 'floor' | 'ceil',
): Date | undefined {
  const text = singleValue(raw, name);
  if (text === undefined) return undefined;
  const date = parseRfc3339(text);
  if (!date) {
    throw ApiError.invalid(name, 'must be an RFC 3339 timestamp such as 2026-01-31T12:00:00Z');
  }
  const subMillis = /\.\d{3}(\d+)/.exec(text)?.[1] ?? '';
  if (rounding === 'ceil' && /[1-9]/.test(subMillis)) return new Date(date.getTime() + 1);
  return date;
}
