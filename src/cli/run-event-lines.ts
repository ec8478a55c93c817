import type { SseEvent } from '../common/sse';

const MAX_TEXT = 200;

interface RunData {
  state: string;
  status_message?: { message?: string };
}

interface TimelineData {
  event_type: string;
  occurred_at: string;
  execution_id?: number;
  payload?: Record<string, unknown>;
}

type Block =
  | { type: 'text'; text: string }
  | { type: 'action'; name: string; input: Record<string, unknown> }
  | { type: 'action_result'; name: string; state: string; output: Record<string, unknown> }
  | { type: 'event'; name: string; data: Record<string, unknown> };

interface MessageData {
  role: string;
  timestamp: string;
  content: Block[];
}

/**
 * Turns a run's stream events into readable lines. Keeps the last state and status printed, so
 * a snapshot that repeats them (every reconnect sends one) prints nothing.
 */
export class RunEventLines {
  private lastRun = '';

  lines(event: SseEvent): string[] {
    const data = JSON.parse(event.data) as unknown;
    switch (event.event) {
      case 'run':
        return this.run(data as RunData);
      case 'timeline':
        return commandLines(data as TimelineData) ?? [timelineLine(data as TimelineData)];
      case 'message':
        return messageLines(data as MessageData);
      default:
        return [];
    }
  }

  private run(run: RunData): string[] {
    const status = run.status_message?.message;
    const line = `state ${run.state}${status ? `: ${oneLine(status)}` : ''}`;
    if (line === this.lastRun) return [];
    this.lastRun = line;
    return [`${clock(new Date().toISOString())}  ${line}`];
  }
}

function timelineLine(event: TimelineData): string {
  const execution = event.execution_id ? ` (execution ${event.execution_id})` : '';
  const payload = event.payload ? `  ${oneLine(JSON.stringify(event.payload))}` : '';
  return `${clock(event.occurred_at)}  timeline ${event.event_type}${execution}${payload}`;
}

/**
 * A command's events as a terminal shows a command: `$ npm test`, its output line by line
 * (`| …`), how it ended. Undefined for other events.
 */
function commandLines(event: TimelineData): string[] | undefined {
  const at = clock(event.occurred_at);
  const payload = event.payload ?? {};
  switch (event.event_type) {
    case 'command_started':
    case 'setup_command_started': {
      const setup = event.event_type === 'setup_command_started' ? ' (setup)' : '';
      return [`${at}  $ ${oneLine(String(payload.command ?? ''))}${setup}`];
    }
    case 'command_output': {
      const lines = String(payload.text ?? '')
        .split('\n')
        .filter((line) => line.trim())
        .map((line) => `${at}  | ${clipped(line)}`);
      return payload.truncated ? [...lines, `${at}  | … (live output stops here)`] : lines;
    }
    case 'command_finished': {
      const how =
        typeof payload.error === 'string'
          ? payload.error
          : payload.timed_out
            ? 'timed out'
            : `exit code ${String(payload.exit_code)}`;
      const took = typeof payload.duration_ms === 'number' ? ` (${payload.duration_ms} ms)` : '';
      return [`${at}  command ended: ${oneLine(how)}${took}`];
    }
    default:
      return undefined;
  }
}

function messageLines(message: MessageData): string[] {
  const at = clock(message.timestamp);
  return message.content.map((block) => {
    switch (block.type) {
      case 'text':
        return `${at}  ${message.role}: ${oneLine(block.text)}`;
      case 'action':
        return `${at}  ${message.role} → ${block.name} ${oneLine(JSON.stringify(block.input))}`;
      case 'action_result':
        return `${at}  ${block.name} ${block.state}: ${oneLine(resultText(block.output))}`;
      case 'event':
        return `${at}  event ${block.name}`;
    }
  });
}

function resultText(output: Record<string, unknown>): string {
  return typeof output.text === 'string' ? output.text : JSON.stringify(output);
}

/** `HH:MM:SS` of an ISO time, in UTC like the API's timestamps. */
function clock(iso: string): string {
  return iso.slice(11, 19);
}

/** A line of output as printed (its indentation kept), cut at MAX_TEXT. */
function clipped(line: string): string {
  const text = line.replace(/\r/g, '').trimEnd();
  return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT - 1)}…` : text;
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > MAX_TEXT ? `${flat.slice(0, MAX_TEXT - 1)}…` : flat;
}
