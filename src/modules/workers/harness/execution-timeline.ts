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

/** The most events one write carries (and the run-scoped API's `events/batch` takes). */
export const MAX_EVENTS_PER_WRITE = 100;

/**
 * One execution's timeline writes, one after another in the order they were emitted, each event
 * with the time it happened. While a hold lasts (a command that has just started), events wait
 * and then go out together in one write: a command that ends within the hold has its start,
 * output and end written once instead of three times (most of an agent's commands are that
 * short), and whatever else the execution emits meanwhile (an egress refusal, a sandbox limit)
 * keeps its place among them. A hold ends when released or after `holdMs`, so a longer
 * command's start is written while it runs. Events emitted while a write is under way go out
 * together in the next one (at most MAX_EVENTS_PER_WRITE a write), so a slow write does not
 * queue one write per event. `emit` resolves once its event is held or written, and rejects when
 * a write failed while it waited (the writes after it still go out).
 */
export class ExecutionTimeline {
  private waiting: RecordedEvent[] = [];
  private holds = 0;
  /** The writes under way: they go on while events wait, and end once none does. */
  private writing: Promise<void> | null = null;

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
      return this.holds > 0 ? Promise.resolve() : this.flush();
    };
    const timer = setTimeout(() => void release().catch(() => undefined), holdMs);
    timer.unref();
    return release;
  }

  private flush(): Promise<void> {
    if (this.waiting.length === 0) return this.writing ?? Promise.resolve();
    this.writing ??= this.writeAll();
    return this.writing;
  }

  /** Writes until nothing waits (what comes meanwhile included); the first failure, if any. */
  private async writeAll(): Promise<void> {
    // Runs on only once flush has recorded it as the writes under way (a writer that throws at
    // once would otherwise end it before, and the record would outlive it).
    await Promise.resolve();
    let failure: { error: unknown } | null = null;
    try {
      while (this.waiting.length > 0 && this.holds === 0) {
        const batch = this.waiting.splice(0, MAX_EVENTS_PER_WRITE);
        try {
          await this.write(batch);
        } catch (error) {
          failure ??= { error };
        }
      }
    } finally {
      this.writing = null;
    }
    if (failure) throw failure.error;
  }
}
