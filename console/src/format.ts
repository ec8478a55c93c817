/** "45 s", "3 min 20 s", "2 h 5 min": a run's or a step's length at a glance. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return seconds % 60 ? `${minutes} min ${seconds % 60} s` : `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return minutes % 60 ? `${hours} h ${minutes % 60} min` : `${hours} h`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

/** "just now", "3 min ago", "in 2 h", "5 d ago". */
export function formatRelative(date: Date, now: number): string {
  const ms = date.getTime() - now;
  const abs = Math.abs(ms);
  if (abs < 10_000) return 'just now';
  const text =
    abs < 60_000
      ? `${Math.round(abs / 1000)} s`
      : abs < 3_600_000
        ? `${Math.round(abs / 60_000)} min`
        : abs < 172_800_000
          ? `${Math.round(abs / 3_600_000)} h`
          : `${Math.round(abs / 86_400_000)} d`;
  return ms < 0 ? `${text} ago` : `in ${text}`;
}

/** Milliseconds of an ISO-8601 duration as the API writes them (PT1H2M3.5S); undefined if not one. */
export function parseIsoDuration(text: string | undefined): number | undefined {
  const match = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/.exec(text ?? '');
  if (!match || text === 'P' || text === 'PT') return undefined;
  const [, days, hours, minutes, seconds] = match.map((part) => Number(part ?? 0));
  return Math.round((((days * 24 + hours) * 60 + minutes) * 60 + seconds) * 1000);
}

/** States in which a run's execution runs (its `run_time` grows). */
export const EXECUTING_STATES = ['CLAIMED', 'INPROGRESS'];

/**
 * How long a run's executions ran (`run_time`; the time between them does not count). While one
 * runs, the time since the run was read (`readAt`) is added, so the clock moves between reads.
 * Undefined before its first execution.
 */
export function runDurationMs(
  run: { run_time?: string; state: string },
  now: number,
  readAt: number,
): number | undefined {
  const ms = parseIsoDuration(run.run_time);
  if (ms === undefined) return undefined;
  return EXECUTING_STATES.includes(run.state) ? ms + Math.max(0, now - readAt) : ms;
}
