import type { Request, Response } from 'express';
import { formatSseComment, formatSseEvent } from '../../../common/sse';
import { ApiError } from '../../../common/errors/api-error';
import { buildProblem } from '../../../common/errors/problem';
import { requestIdOf } from '../../../common/request-id';

export interface ConnectionLimits {
  heartbeatMs: number;
  /** How long a client may leave written data unread before the stream is dropped. */
  drainTimeoutMs: number;
}

export const RESUME_HINT = 'reconnect with Last-Event-ID to continue';

/**
 * One text/event-stream response: its headers, keep-alives, writes that wait for a slow client
 * (one that reads nothing for `drainTimeoutMs` is dropped, so it costs a bounded buffer) and its
 * end, with the reason as a comment or as an `event: error`.
 */
export class SseConnection {
  private readonly closeListeners: (() => void)[] = [];
  private heartbeat: NodeJS.Timeout | undefined;
  private ended = false;

  constructor(
    private readonly req: Request,
    private readonly res: Response,
    private readonly limits: ConnectionLimits,
  ) {
    // The response's close, not the request's: that one fires once a GET's (empty) body is read.
    res.on('close', () => this.close());
  }

  get closed(): boolean {
    return this.ended;
  }

  onClose(listener: () => void): void {
    this.closeListeners.push(listener);
  }

  /** Sends the headers; false (and closed) when the client left before they could go. */
  open(): boolean {
    if (this.res.destroyed) {
      this.close(); // gone before its 'close' could be heard
      return false;
    }
    this.res.status(200);
    this.res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    // no-transform keeps compressing proxies from buffering; X-Accel-Buffering does it for nginx.
    this.res.setHeader('Cache-Control', 'no-cache, no-transform');
    this.res.setHeader('X-Accel-Buffering', 'no');
    this.res.flushHeaders();
    this.req.socket.setNoDelay(true);
    // An idle-socket timeout set on the server (none by default) must not cut a quiet stream.
    this.req.socket.setTimeout(0);
    return true;
  }

  /** Starts the `: keep-alive` comments (once the first events are out). */
  keepAlive(): void {
    if (this.ended || this.heartbeat) return;
    this.heartbeat = setInterval(() => {
      if (!this.ended && this.res.writableLength === 0)
        this.res.write(formatSseComment('keep-alive'));
    }, this.limits.heartbeatMs);
    this.heartbeat.unref();
  }

  /** Writes a frame; resolves once the client has taken it (or the stream ended). */
  async write(frame: string): Promise<void> {
    if (this.ended || this.res.write(frame)) return;
    if (!(await drained(this.res, this.limits.drainTimeoutMs)) && !this.ended) {
      this.close(
        `dropped: the client did not read for ${this.limits.drainTimeoutMs} ms; ${RESUME_HINT}`,
      );
      // A client that reads nothing would keep the goodbye (and its socket) forever.
      this.res.destroy();
    }
  }

  close(reason?: string): void {
    if (this.ended) return;
    this.ended = true;
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
    if (this.ended) return;
    if (this.res.headersSent && !this.res.writableEnded && !this.res.destroyed) {
      this.res.write(formatSseEvent('error', this.problem(error)));
    }
    this.close(error.detail);
  }

  /** The Oz Error body of `error`, as this stream's request would have been answered. */
  problem(error: ApiError): ReturnType<typeof buildProblem> {
    return buildProblem({
      code: error.code,
      title: error.title,
      status: error.status,
      detail: error.detail,
      instance: this.req.originalUrl.split('?')[0],
      retryable: error.retryable,
      traceId: requestIdOf(this.res),
    });
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
