import { useEffect, useState } from 'react';
import { formatDuration, formatRelative, runDurationMs } from '../format';

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

export function RunDuration({
  run,
}: {
  run: { started_at: string | null; finished_at: string | null };
}) {
  const now = useNow(1000);
  const ms = runDurationMs(run, now);
  if (ms === undefined) return <span className="muted">—</span>;
  return (
    <span data-testid="run-duration" title={run.finished_at ? undefined : 'still running'}>
      {formatDuration(ms)}
      {run.finished_at ? '' : '…'}
    </span>
  );
}
