import { useEffect, useState } from 'react';
import { EXECUTING_STATES, formatDuration, formatRelative, runDurationMs } from '../format';

/** The clock, re-read every `ms` so relative times and running durations move on. */
export function useNow(ms = 15_000): number {
  const [now, setNow] = useState(Date.now);
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(timer);
  }, [ms]);
  return now;
}

/** An absolute time (the browser's locale), or a dash. */
export function Time({ value }: { value?: string | null }) {
  if (!value) return <span className="muted">—</span>;
  return <time dateTime={value}>{new Date(value).toLocaleString()}</time>;
}

/** "3 min ago", with the exact time in its title (hover) and dateTime. */
export function RelativeTime({ value }: { value?: string | null }) {
  const now = useNow();
  if (!value) return <span className="muted">—</span>;
  const date = new Date(value);
  return (
    <time dateTime={value} title={date.toLocaleString()}>
      {formatRelative(date, now)}
    </time>
  );
}

/**
 * The time a value was first rendered: when a fresh copy of something that ages (a running run's
 * `run_time`) arrived, so the clock can run on from it.
 */
function useReadAt(value: unknown): number {
  const [read, setRead] = useState(() => ({ value, at: Date.now() }));
  if (read.value !== value) {
    const next = { value, at: Date.now() };
    setRead(next);
    return next.at;
  }
  return read.at;
}

/**
 * How long the run's executions ran (`run_time`), ticking while one runs. The time between its
 * executions (before a follow-up, waiting for a person or a slot) does not count.
 */
export function RunDuration({
  run,
}: {
  run: { run_time?: string; state: string; executions?: number };
}) {
  const now = useNow(1000);
  const readAt = useReadAt(run.run_time);
  const ms = runDurationMs(run, now, readAt);
  if (ms === undefined) return <span className="muted">—</span>;
  const running = EXECUTING_STATES.includes(run.state);
  const executions = run.executions ?? 1;
  const title = [
    running ? 'still running' : '',
    executions > 1 ? `${executions} executions; the time between them is not counted` : '',
  ]
    .filter(Boolean)
    .join('; ');
  return (
    <span data-testid="run-duration" title={title || undefined}>
      {formatDuration(ms)}
      {running ? '…' : ''}
    </span>
  );
}
