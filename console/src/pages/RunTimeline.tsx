import type { TimelineEvent } from '../api/run-stream';
import { Time, useNow } from '../components/time';
import { formatDuration, timelineSteps } from '../format';
import { timelineLabel } from '../labels';

/** The run's steps with their durations, as bars along the run's length (Gantt-like). */
export function RunTimeline({
  events,
  finishedAt,
}: {
  events: TimelineEvent[];
  finishedAt: string | null;
}) {
  const now = useNow(1000);
  if (events.length === 0) return <p className="muted">No timeline events yet.</p>;
  const { steps, startMs, totalMs } = timelineSteps(events, finishedAt, now);
  const percent = (ms: number) => (totalMs > 0 ? (ms / totalMs) * 100 : 0);
  return (
    <ol className="waterfall" aria-label="Timeline">
      {steps.map(({ event, startMs: at, durationMs }) => (
        <li key={event.event_uuid} data-event={event.event_type}>
          <span className="step-name">
            {timelineLabel(event.event_type)} <code className="muted">{event.event_type}</code>
          </span>
          <span className="step-bar" aria-hidden="true">
            <span
              className={`bar event-${event.event_type}`}
              style={{
                marginLeft: `${percent(at - startMs)}%`,
                width: `max(2px, ${percent(durationMs)}%)`,
              }}
            />
          </span>
          <span className="step-time">
            <span className="step-duration">
              {durationMs > 0 ? formatDuration(durationMs) : ''}
            </span>{' '}
            <Time value={event.occurred_at} />
          </span>
        </li>
      ))}
    </ol>
  );
}
