import type { components } from '../api/schema';

type TimelineEvent = components['schemas']['TimelineEvent'];

/** The event's type; Ambient records more types than the Oz enum of the schema lists. */
const typeOf = (event: TimelineEvent): string => event.event_type;

/** Events that open a command's step; its output and end carry the same `command_id`. */
const COMMAND_STARTS = ['command_started', 'setup_command_started'];
const COMMAND_ENDS = ['command_finished', 'setup_command_succeeded', 'setup_command_failed'];
const COMMAND_OUTPUT = 'command_output';
/** Steps that are a failure in themselves (red). */
const FAILURES = [
  'oz_run_failed',
  'oz_run_errored',
  'setup_command_failed',
  'repository_clone_failed',
];

/** `running` only while the run executes; a command the run left unfinished is `stopped`. */
export type StepStatus = 'running' | 'done' | 'failed' | 'stopped' | 'plain';

export interface CommandStep {
  /** The command line (or, for a clone, the repository). */
  text: string;
  /** Its output as recorded so far, in order; a failed step's last lines when none was streamed. */
  output: string;
  /** The command said more than was recorded live. */
  truncated: boolean;
  /** How it ended: "exit code 3", "timed out", "killed: out of memory"; absent while it runs. */
  ending?: string;
}

export interface TimelineStep {
  /** The event the step starts with. */
  event: TimelineEvent;
  startMs: number;
  /** A command's: until it ended (now while it runs). Others: until the next step, the last until the run's end. */
  durationMs: number;
  status: StepStatus;
  command?: CommandStep;
}

type Payload = Record<string, unknown>;

const payloadOf = (event: TimelineEvent): Payload => (event.payload ?? {}) as Payload;
const commandIdOf = (event: TimelineEvent): string | undefined => {
  const id = payloadOf(event).command_id;
  return typeof id === 'string' ? id : undefined;
};

/** How a command or clone ended, in a few words; undefined when its event does not say. */
export function endingOf(payload: Payload): string | undefined {
  if (typeof payload.error === 'string') return payload.error;
  if (payload.timed_out === true) return 'timed out';
  if (typeof payload.killed === 'string') return `killed: ${payload.killed}`;
  if (typeof payload.exit_code === 'number') return `exit code ${payload.exit_code}`;
  if (payload.exit_code === null) return 'killed';
  return undefined;
}

function commandFailed(end: TimelineEvent): boolean {
  if (typeOf(end) === 'setup_command_failed') return true;
  if (typeOf(end) === 'setup_command_succeeded') return false;
  return payloadOf(end).exit_code !== 0;
}

/** What a step that stands for a command (or a failed clone) shows under its name. */
function commandStep(
  start: TimelineEvent,
  outputs: TimelineEvent[],
  end?: TimelineEvent,
): CommandStep {
  const payload = payloadOf(start);
  const streamed = outputs
    .map((event) => payloadOf(event))
    .sort((a, b) => Number(a.seq) - Number(b.seq));
  const last = payloadOf(end ?? start);
  const tail = last.output_tail;
  const text =
    typeof payload.command === 'string'
      ? payload.command
      : [payload.owner, payload.repo].filter((part) => typeof part === 'string').join('/');
  return {
    text,
    output: streamed.length
      ? streamed.map((chunk) => String(chunk.text ?? '')).join('')
      : typeof tail === 'string'
        ? tail
        : '',
    truncated: streamed.some((chunk) => chunk.truncated === true),
    ending: endingOf(last),
  };
}

/**
 * The run's timeline as the steps of a waterfall. A command (the agent's or a setup command) is
 * one step from its start to its end, with its output; its output and end events are not steps
 * of their own. Other steps last until the next step; the last until the run's end (or now).
 * `executing`: the run is CLAIMED/INPROGRESS, so a command without an end is still running.
 */
export function timelineSteps(
  events: TimelineEvent[],
  finishedAt: string | null,
  now: number,
  executing: boolean,
): { steps: TimelineStep[]; startMs: number; totalMs: number } {
  const outputs = new Map<string, TimelineEvent[]>();
  const ends = new Map<string, TimelineEvent>();
  const started = new Set<string>();
  for (const event of events) {
    const id = commandIdOf(event);
    if (!id) continue;
    if (typeOf(event) === COMMAND_OUTPUT) outputs.set(id, [...(outputs.get(id) ?? []), event]);
    else if (COMMAND_ENDS.includes(event.event_type)) ends.set(id, event);
    else if (COMMAND_STARTS.includes(event.event_type)) started.add(id);
  }
  const shown = events.filter((event) => {
    if (typeOf(event) === COMMAND_OUTPUT) return false;
    const id = commandIdOf(event);
    return !(COMMAND_ENDS.includes(event.event_type) && id && started.has(id));
  });
  const time = (event: TimelineEvent) => new Date(event.occurred_at).getTime();
  const times = events.map(time);
  const startMs = times.length ? Math.min(...times) : now;
  const endMs = Math.max(finishedAt ? new Date(finishedAt).getTime() : now, ...times);
  const steps = shown.map((event, index): TimelineStep => {
    const at = time(event);
    const id = commandIdOf(event);
    if (id && COMMAND_STARTS.includes(event.event_type)) {
      const end = ends.get(id);
      const status: StepStatus = end
        ? commandFailed(end)
          ? 'failed'
          : 'done'
        : executing
          ? 'running'
          : 'stopped';
      return {
        event,
        startMs: at,
        durationMs: (end ? time(end) : executing ? now : endMs) - at,
        status,
        command: commandStep(event, outputs.get(id) ?? [], end),
      };
    }
    const next = shown[index + 1];
    const failed = FAILURES.includes(event.event_type);
    const failedStep = ['setup_command_failed', 'repository_clone_failed'].includes(typeOf(event));
    return {
      event,
      startMs: at,
      durationMs: (next ? time(next) : endMs) - at,
      status: failed ? 'failed' : 'plain',
      ...(failedStep ? { command: commandStep(event, id ? (outputs.get(id) ?? []) : []) } : {}),
    };
  });
  return { steps, startMs, totalMs: endMs - startMs };
}
