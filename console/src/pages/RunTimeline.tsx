import { useEffect, useRef, useState } from 'react';
import type { TimelineEvent } from '../api/run-stream';
import { Time, useNow } from '../components/time';
import { formatDuration } from '../format';
import { timelineSteps, type TimelineStep } from '../format/timeline';
import { timelineLabel } from '../labels';

/** A command's output, open while it runs or when it failed; follows the end while it runs. */
function CommandOutput({ step }: { step: TimelineStep }) {
  const command = step.command!;
  const auto = step.status === 'running' || step.status === 'failed';
  const [open, setOpen] = useState(auto);
  const pre = useRef<HTMLPreElement>(null);
  useEffect(() => {
    if (auto) setOpen(true);
  }, [auto]);
  useEffect(() => {
    const element = pre.current;
    if (element && step.status === 'running') element.scrollTop = element.scrollHeight;
  }, [command.output, step.status]);
  if (!command.output && step.status !== 'running') return null;
  return (
    <details
      className="command-output"
      open={open}
      onToggle={(event) => setOpen(event.currentTarget.open)}
    >
      <summary>Output</summary>
      <pre ref={pre} data-testid="command-output">
        {command.output || (step.status === 'running' ? 'Waiting for output…' : '')}
      </pre>
      {command.truncated && (
        <p className="hint">
          Live output stops here; the command&apos;s result in the conversation has its end.
        </p>
      )}
    </details>
  );
}

/**
 * How long a step lasted; "0 ms" for one that took no time (a claim and its start are one write),
 * nothing for the last step, which ends the timeline and lasts no time of its own.
 */
function StepTime({ step, last }: { step: TimelineStep; last: boolean }) {
  if (step.status === 'running') {
    return (
      <span className="running-indicator" data-testid="command-running">
        <span className="spinner" aria-hidden="true" />
        Running <span className="step-duration">{formatDuration(step.durationMs)}</span>
      </span>
    );
  }
  return (
    <span className="step-duration">
      {step.durationMs > 0 || !last ? formatDuration(step.durationMs) : ''}
    </span>
  );
}

function StepName({ step }: { step: TimelineStep }) {
  const { event, command } = step;
  return (
    <span className="step-name">
      {timelineLabel(event.event_type)}{' '}
      {command?.text ? (
        <code className="step-command" title={command.text}>
          {command.text}
        </code>
      ) : (
        <code className="muted">{event.event_type}</code>
      )}
      {command?.ending && step.status !== 'done' && (
        <span className="step-ending"> {command.ending}</span>
      )}
    </span>
  );
}

/**
 * The run's steps with their durations, as bars along the run's length (Gantt-like). Commands
 * are steps from their start to their end, with their output (streamed while they run); failed
 * steps are red. `executing`: the run is CLAIMED/INPROGRESS; `ended`: it will record nothing more.
 */
export function RunTimeline({
  events,
  finishedAt,
  executing,
  ended,
}: {
  events: TimelineEvent[];
  finishedAt: string | null;
  executing: boolean;
  ended: boolean;
}) {
  const now = useNow(1000);
  if (events.length === 0) {
    return (
      <p className="muted">{ended ? 'This run recorded no events.' : 'No timeline events yet.'}</p>
    );
  }
  const { steps, startMs, totalMs } = timelineSteps(events, finishedAt, now, executing);
  const percent = (ms: number) => (totalMs > 0 ? (ms / totalMs) * 100 : 0);
  return (
    <ol className="waterfall" aria-label="Timeline">
      {steps.map((step, index) => (
        <li
          key={step.event.event_uuid}
          className={`step step-${step.status}`}
          data-event={step.event.event_type}
          data-status={step.status}
        >
          <div className="step-row">
            <StepName step={step} />
            <span className="step-bar" aria-hidden="true">
              <span
                className={`bar event-${step.event.event_type}`}
                style={{
                  marginLeft: `${percent(step.startMs - startMs)}%`,
                  width: `max(2px, ${percent(step.durationMs)}%)`,
                }}
              />
            </span>
            <span className="step-time">
              <StepTime step={step} last={index === steps.length - 1} />{' '}
              <Time value={step.event.occurred_at} />
            </span>
          </div>
          {step.command && <CommandOutput step={step} />}
        </li>
      ))}
    </ol>
  );
}
