import type { components } from './api/schema';

type TimelineEvent = components['schemas']['TimelineEvent'];

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

/** How long a run took (or, still running, has taken so far); undefined before it started. */
export function runDurationMs(
  run: { started_at: string | null; finished_at: string | null },
  now: number,
): number | undefined {
  if (!run.started_at) return undefined;
  const end = run.finished_at ? new Date(run.finished_at).getTime() : now;
  return end - new Date(run.started_at).getTime();
}

export interface TimelineStep {
  event: TimelineEvent;
  startMs: number;
  /** Until the next event, or the run's end (now while it runs); 0 for the last of a finished run. */
  durationMs: number;
}

/**
 * The run's timeline events as steps of a waterfall: each lasts from its event to the next one;
 * the last lasts until the run finished (or until now while it runs).
 */
export function timelineSteps(
  events: TimelineEvent[],
  finishedAt: string | null,
  now: number,
): { steps: TimelineStep[]; startMs: number; totalMs: number } {
  const times = events.map((event) => new Date(event.occurred_at).getTime());
  const startMs = times[0] ?? now;
  const endMs = Math.max(finishedAt ? new Date(finishedAt).getTime() : now, ...times);
  const steps = events.map((event, index) => ({
    event,
    startMs: times[index],
    durationMs: (times[index + 1] ?? endMs) - times[index],
  }));
  return { steps, startMs, totalMs: endMs - startMs };
}
