import type { Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { formatSseComment, formatSseEvent } from '../../../common/sse';
import { ApiError } from '../../../common/errors/api-error';
import { buildProblem } from '../../../common/errors/problem';
import { requestIdOf } from '../../../common/request-id';
import { CallIndex, toMessage } from '../conversation/conversation.mapper';
import type { Run } from '../entities/run.entity';
import type { RunEvent } from '../entities/run-event.entity';
import type { RunMessage } from '../entities/run-message.entity';
import { toTimelineEvent } from '../run-item.mapper';
import type { ChangeKind } from './run-changes.service';
import type { RunStreamReader } from './run-stream-reader.service';
import { formatCursor, StreamCursor } from './stream-cursor';

export interface StreamLimits {
  heartbeatMs: number;
  /** Rows read per query; a longer backlog is read in several rounds. */
  batchSize: number;
  /** How long a client may leave written data unread before the stream is dropped. */
  drainTimeoutMs: number;
}

type Item = { kind: 'timeline'; row: RunEvent } | { kind: 'message'; row: RunMessage };

export const RESUME_HINT = 'reconnect with Last-Event-ID to continue';

/**
 * One client's stream of one run. Change hints only say what to look at; the session reads the
 * rows past its cursor from the database and writes them in order, one pump at a time, so a
 * hint that arrives during a replay or twice never sends anything twice. Hints that arrive while
 * the client is slow coalesce (at most one per kind is pending) and the pump waits for the socket
 * to drain, so a slow client costs a bounded buffer; one that reads nothing for
 * `drainTimeoutMs` is dropped.
 */
export class RunStreamSession {
  private readonly pending = new Set<ChangeKind>();
  private readonly closeListeners: (() => void)[] = [];
  private cursor: StreamCursor = { timeline: 0n, message: 0n };
  private started = false;
  private pumping = false;
  private closed = false;
  private lastRun = '';
  private calls: CallIndex | null = null;
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(
    private readonly req: Request,
    private readonly res: Response,
    private readonly run: Pick<Run, 'id' | 'teamId' | 'config'>,
    private readonly reader: RunStreamReader,
    private readonly limits: StreamLimits,
    private readonly logger: Logger,
  ) {
    // The response's close, not the request's: that one fires once a GET's (empty) body is read.
    res.on('close', () => this.close());
  }

  get runId(): string {
    return this.run.id;
  }

  onClose(listener: () => void): void {
    this.closeListeners.push(listener);
  }

  /** Sends the snapshot and, when resuming, what the client missed; then follows the hints. */
  async start(resume: StreamCursor | null): Promise<void> {
    if (this.res.destroyed) return this.close(); // gone before its 'close' could be heard
    this.res.status(200);
    this.res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    // no-transform keeps compressing proxies from buffering; X-Accel-Buffering does it for nginx.
    this.res.setHeader('Cache-Control', 'no-cache, no-transform');
    this.res.setHeader('X-Accel-Buffering', 'no');
    this.res.flushHeaders();
    this.req.socket.setNoDelay(true);
    // An idle-socket timeout set on the server (none by default) must not cut a quiet stream.
    this.req.socket.setTimeout(0);
    try {
      this.cursor = resume ?? (await this.reader.latest(this.runId));
      await this.sendRun(true);
      if (resume) {
        await this.catchUp(['timeline', 'message']);
        // Marks the end of the replay: clients that stop at a terminal state can trust it now.
        await this.sendRun(true);
      }
    } catch (err) {
      return this.fail(err);
    }
    if (this.closed) return; // the client left during the snapshot or the replay
    this.started = true;
    this.heartbeat = setInterval(() => this.keepAlive(), this.limits.heartbeatMs);
    this.heartbeat.unref();
    this.kick();
  }

  poke(kinds: Iterable<ChangeKind>): void {
    for (const kind of kinds) this.pending.add(kind);
    this.kick();
  }

  close(reason?: string): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.heartbeat);
    for (const listener of this.closeListeners) listener();
    if (this.res.writableEnded || this.res.destroyed) return;
    this.res.end(reason ? formatSseComment(reason) : undefined);
  }

  /**
   * Ends the stream with an `event: error` whose data is the Oz Error body (the key that opened
   * it stopped authenticating), so a client knows not to reconnect with the same key.
   */
  closeWithError(error: ApiError): void {
    if (this.closed) return;
    if (this.res.headersSent && !this.res.writableEnded && !this.res.destroyed) {
      const problem = buildProblem({
        code: error.code,
        title: error.title,
        status: error.status,
        detail: error.detail,
        instance: this.req.originalUrl.split('?')[0],
        retryable: error.retryable,
        traceId: requestIdOf(this.res),
      });
      this.res.write(formatSseEvent('error', problem));
    }
    this.close(error.detail);
  }

  private kick(): void {
    if (!this.started || this.pumping || this.closed || this.pending.size === 0) return;
    this.pumping = true;
    void this.pump()
      .catch((err: unknown) => this.fail(err))
      .finally(() => {
        this.pumping = false;
        this.kick();
      });
  }

  private async pump(): Promise<void> {
    while (this.pending.size > 0 && !this.closed) {
      const kinds = [...this.pending];
      this.pending.clear();
      await this.catchUp(kinds);
      // Run rows often change beside a timeline event (retention, debug window) without a hint.
      if (kinds.includes('run') || kinds.includes('timeline')) await this.sendRun(false);
    }
  }

  /**
   * Writes the timeline events and messages past the cursor, the two tables merged by time. Each
   * keeps its id order; when a batch of one table was full, the merge stops where that batch ends
   * (the next rows of it may come before the other table's remaining ones).
   */
  private async catchUp(kinds: ChangeKind[]): Promise<void> {
    const { batchSize } = this.limits;
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
        if (this.closed) return;
        await this.send(item);
      }
      if (!eventsFull && !messagesFull) return;
    }
  }

  private async send(item: Item): Promise<void> {
    if (item.kind === 'timeline') {
      this.cursor = { ...this.cursor, timeline: BigInt(item.row.id) };
      const id = formatCursor(this.cursor);
      return this.write(formatSseEvent('timeline', toTimelineEvent(item.row), id));
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
    if (message) await this.write(formatSseEvent('message', message, formatCursor(this.cursor)));
  }

  /** The RunItem, unless nothing but its clock-derived `run_time` changed since the last one. */
  private async sendRun(always: boolean): Promise<void> {
    const item = await this.reader.item(this.run.teamId, this.runId);
    const { run_time: _runTime, ...stable } = item;
    const fingerprint = JSON.stringify(stable);
    if (!always && fingerprint === this.lastRun) return;
    this.lastRun = fingerprint;
    await this.write(formatSseEvent('run', item, formatCursor(this.cursor)));
  }

  private async write(frame: string): Promise<void> {
    if (this.closed || this.res.write(frame)) return;
    if (!(await drained(this.res, this.limits.drainTimeoutMs)) && !this.closed) {
      this.close(
        `dropped: the client did not read for ${this.limits.drainTimeoutMs} ms; ${RESUME_HINT}`,
      );
      // A client that reads nothing would keep the goodbye (and its socket) forever.
      this.res.destroy();
    }
  }

  private keepAlive(): void {
    if (!this.closed && this.res.writableLength === 0)
      this.res.write(formatSseComment('keep-alive'));
  }

  private fail(err: unknown): void {
    if (err instanceof ApiError && err.code === 'resource_not_found') {
      return this.close('the run no longer exists');
    }
    this.logger.warn(`stream of run ${this.runId} ended: ${(err as Error).message}`);
    this.close(`error: ${(err as Error).message}; ${RESUME_HINT}`);
  }
}

/** Whether `res` drained within `timeoutMs` (false too when it closed first). */
function drained(res: Response, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (value: boolean) => {
      clearTimeout(timer);
      res.off('drain', onDrain);
      res.off('close', onClose);
      resolve(value);
    };
    const onDrain = () => done(true);
    const onClose = () => done(false);
    const timer = setTimeout(() => done(false), timeoutMs);
    res.on('drain', onDrain);
    res.on('close', onClose);
  });
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
