import { CallIndex, toMessage } from '../conversation/conversation.mapper';
import type { Run } from '../entities/run.entity';
import type { RunEvent } from '../entities/run-event.entity';
import type { RunMessage } from '../entities/run-message.entity';
import { toTimelineEvent } from '../run-item.mapper';
import type { ChangeKind } from './run-changes.service';
import type { RunStreamReader } from './run-stream-reader.service';
import type { StreamCursor } from './stream-cursor';

export type FeedEvent = 'run' | 'timeline' | 'message';

/** Where a feed's events go: the stream that owns it frames and writes them. */
export interface FeedSink {
  readonly closed: boolean;
  /** Resolves once the event is written (and the client has taken it, when it is slow). */
  send(event: FeedEvent, data: unknown, cursor: StreamCursor): Promise<void>;
}

export type FeedRun = Pick<Run, 'id' | 'teamId' | 'config'>;

type Item = { kind: 'timeline'; row: RunEvent } | { kind: 'message'; row: RunMessage };

/**
 * The live events of one run, for one stream. Change hints only say what to look at; the feed
 * reads the rows past its cursor from the database and sends them in order, one pump at a time,
 * so a hint that arrives during a replay or twice never sends anything twice. Hints that arrive
 * while the client is slow coalesce (at most one per kind is pending) and the pump waits for
 * the sink, so a slow client costs a bounded buffer.
 */
export class RunFeed {
  private readonly pending = new Set<ChangeKind>();
  private cursor: StreamCursor = { timeline: 0n, message: 0n };
  private started = false;
  private pumping = false;
  private stopped = false;
  private lastRun = '';
  private calls: CallIndex | null = null;

  constructor(
    private readonly run: FeedRun,
    private readonly reader: RunStreamReader,
    private readonly batchSize: number,
    private readonly sink: FeedSink,
    /** A read failed (the run was deleted: `resource_not_found`); the feed stops. */
    private readonly failed: (err: unknown) => void,
  ) {}

  get runId(): string {
    return this.run.id;
  }

  /**
   * Sends the snapshot and, when resuming, what the client missed and the snapshot again (which
   * marks the end of the replay); then follows the hints.
   */
  async start(resume: StreamCursor | null): Promise<void> {
    try {
      this.cursor = resume ?? (await this.reader.latest(this.runId));
      await this.sendRun(true);
      if (resume) {
        await this.catchUp(['timeline', 'message']);
        await this.sendRun(true);
      }
    } catch (err) {
      return this.fail(err);
    }
    this.started = true;
    this.kick();
  }

  poke(kinds: Iterable<ChangeKind>): void {
    for (const kind of kinds) this.pending.add(kind);
    this.kick();
  }

  stop(): void {
    this.stopped = true;
  }

  private get done(): boolean {
    return this.stopped || this.sink.closed;
  }

  private fail(err: unknown): void {
    if (this.done) return;
    this.stop();
    this.failed(err);
  }

  private kick(): void {
    if (!this.started || this.pumping || this.done || this.pending.size === 0) return;
    this.pumping = true;
    void this.pump()
      .catch((err: unknown) => this.fail(err))
      .finally(() => {
        this.pumping = false;
        this.kick();
      });
  }

  private async pump(): Promise<void> {
    while (this.pending.size > 0 && !this.done) {
      const kinds = [...this.pending];
      this.pending.clear();
      await this.catchUp(kinds);
      // Run rows often change beside a timeline event (retention, debug window) without a hint.
      if (kinds.includes('run') || kinds.includes('timeline')) await this.sendRun(false);
    }
  }

  /**
   * Sends the timeline events and messages past the cursor, the two tables merged by time. Each
   * keeps its id order; when a batch of one table was full, the merge stops where that batch ends
   * (the next rows of it may come before the other table's remaining ones).
   */
  private async catchUp(kinds: ChangeKind[]): Promise<void> {
    const { batchSize } = this;
    for (;;) {
      const [events, messages] = await Promise.all([
        kinds.includes('timeline')
          ? this.reader.timelineAfter(this.runId, this.cursor.timeline, batchSize)
          : [],
        kinds.includes('message')
          ? this.reader.messagesAfter(this.runId, this.cursor.message, batchSize)
          : [],
      ]);
      const eventsFull = events.length === batchSize;
      const messagesFull = messages.length === batchSize;
      for (const item of mergeByTime(events, messages, eventsFull, messagesFull)) {
        if (this.done) return;
        await this.send(item);
      }
      if (!eventsFull && !messagesFull) return;
    }
  }

  private async send(item: Item): Promise<void> {
    if (item.kind === 'timeline') {
      this.cursor = { ...this.cursor, timeline: BigInt(item.row.id) };
      return this.sink.send('timeline', toTimelineEvent(item.row), this.cursor);
    }
    this.cursor = { ...this.cursor, message: BigInt(item.row.id) };
    const harness = this.run.config.harness?.type ?? 'oz';
    const row = item.row;
    if (!this.calls) {
      // Tool results name the call they answer, which may be older than this stream.
      this.calls = await this.reader.callsBefore(this.runId, row.id, harness);
    }
    const message = toMessage(row, this.calls, harness);
    // A message the conversation leaves out (a system prompt) moves the cursor silently.
    if (message) await this.sink.send('message', message, this.cursor);
  }

  /** The RunItem, unless nothing but its clock-derived `run_time` changed since the last one. */
  private async sendRun(always: boolean): Promise<void> {
    const item = await this.reader.item(this.run.teamId, this.runId);
    const { run_time: _runTime, ...stable } = item;
    const fingerprint = JSON.stringify(stable);
    if (!always && fingerprint === this.lastRun) return;
    this.lastRun = fingerprint;
    await this.sink.send('run', item, this.cursor);
  }
}

/** Both tables' rows in time order, each table's own (id) order kept; see `catchUp`. */
export function mergeByTime(
  events: RunEvent[],
  messages: RunMessage[],
  eventsFull: boolean,
  messagesFull: boolean,
): Item[] {
  const items: Item[] = [];
  let e = 0;
  let m = 0;
  for (;;) {
    if ((e === events.length && eventsFull) || (m === messages.length && messagesFull)) break;
    if (e === events.length && m === messages.length) break;
    const takeEvent =
      m === messages.length ||
      (e < events.length && events[e].occurredAt.getTime() <= messages[m].createdAt.getTime());
    items.push(
      takeEvent ? { kind: 'timeline', row: events[e++] } : { kind: 'message', row: messages[m++] },
    );
  }
  return items;
}
