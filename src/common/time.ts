/**
 * Whether `work` settles (either way) within `ms`. It goes on regardless; a caller that stops
 * waiting leaves what it does to whoever cleans up after it.
 */
export async function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([work.then(onSettled, onSettled), late]);
  } finally {
    clearTimeout(timer);
  }
}

const onSettled = (): true => true;

/** RFC 3339 with milliseconds in UTC, the form every timestamp in the API takes. */
export function toRfc3339(date: Date | null | undefined): string | null {
  return date ? date.toISOString() : null;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

/** Parses an RFC 3339 timestamp; returns null when the text is not one. */
export function parseRfc3339(text: string): Date | null {
  if (!RFC3339.test(text)) return null;
  const date = new Date(text);
  if (Number.isNaN(date.getTime())) return null;
  // V8 rolls a day past the month's end over (Feb 30 → Mar 2): refuse what no calendar has.
  const [year, month, day] = text.slice(0, 10).split('-').map(Number);
  return day <= new Date(Date.UTC(year, month, 0)).getUTCDate() ? date : null;
}

/**
 * ISO-8601 duration such as PT2M30S (the RunItem `run_time`), to the millisecond: seconds take a
 * decimal fraction when they are not whole (PT0.884S, PT1M2.5S).
 */
export function isoDuration(ms: number): string {
  const total = Math.max(0, Math.round(ms));
  const h = Math.floor(total / 3_600_000);
  const m = Math.floor((total % 3_600_000) / 60_000);
  const secondsMs = total % 60_000;
  const s = secondsMs % 1000 ? (secondsMs / 1000).toFixed(3).replace(/0+$/, '') : secondsMs / 1000;
  return `PT${h ? `${h}H` : ''}${m ? `${m}M` : ''}${secondsMs || (!h && !m) ? `${s}S` : ''}`;
}
