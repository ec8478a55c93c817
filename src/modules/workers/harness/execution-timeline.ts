import type { EmitEvent } from './command-output';

/** A timeline event with the time it happened, as several are written together. */
export interface RecordedEvent {
  eventType: string;
  payload?: Record<string, unknown>;
  occurredAt: Date;
}

/** Writes timeline events in order, all or none, in one statement. */
export type WriteEvents = (events: RecordedEvent[]) => Promise<void>;

/**
 * Starts holding an execution's timeline events (see ExecutionTimeline.hold); the function
 * returned ends the hold and resolves once what was held is written.
 */
export type HoldEvents = () => () => Promise<void>;

/** How long a command's events wait to go out together: a live view sees its start this late. */
export const COMMAND_EVENTS_HOLD_MS = 250;

/**
 * One execution's timeline writes, one after another in the order they were emitted, each event
 * with the time it happened. While a hold lasts (a command that has just started), events wait
 * and then go out together in one write: a command that ends within the hold has its start,
 * output and end written once instead of three times (most of an agent's commands are that
 * short), and whatever else the execution emits meanwhile (an egress refusal, a sandbox limit)
 * keeps its place among them. A hold ends when released or after `holdMs`, so a longer
 * command's start is written while it runs. `emit` resolves once its event is held or written,
 * and rejects when its write failed (a later write still goes out).
 */
export class ExecutionTimeline {
  private waiting: RecordedEvent[] = [];
  private holds = 0;
  private writing: Promise<void> = Promise.resolve();

  constructor(private readonly write: WriteEvents) {}

  readonly emit: EmitEvent = (eventType, payload) =>
    this.record([{ eventType, payload, occurredAt: new Date() }]);

  /** Events dated already (another process's), after the ones emitted before them. */
  record(events: RecordedEvent[]): Promise<void> {
    this.waiting.push(...events);
    return this.holds > 0 ? Promise.resolve() : this.flush();
  }

  hold(holdMs: number = COMMAND_EVENTS_HOLD_MS): () => Promise<void> {
    this.holds++;
    let held = true;
    const release = () => {
      if (held) {
        held = false;
        clearTimeout(timer);
        this.holds--;
      }
      return this.holds > 0 ? this.writing : this.flush();
    };
    const timer = setTimeout(() => void release().catch(() => undefined), holdMs);
    timer.unref();
    return release;
  }

  private flush(): Promise<void> {
    const batch = this.waiting;
    this.waiting = [];
    if (batch.length === 0) return this.writing;
    this.writing = this.writing.catch(() => undefined).then(() => this.write(batch));
    return this.writing;
  }
}
