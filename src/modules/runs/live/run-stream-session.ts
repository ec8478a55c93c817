import type { Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { formatSseEvent } from '../../../common/sse';
import { ApiError } from '../../../common/errors/api-error';
import { FeedRun, RunFeed } from './run-feed';
import type { ChangeKind } from './run-changes.service';
import type { RunStreamReader } from './run-stream-reader.service';
import { ConnectionLimits, RESUME_HINT, SseConnection } from './sse-connection';
import { formatCursor, StreamCursor } from './stream-cursor';

export { RESUME_HINT } from './sse-connection';

export interface StreamLimits extends ConnectionLimits {
  /** Rows read per query; a longer backlog is read in several rounds. */
  batchSize: number;
}

/**
 * One client's stream of one run (GET /agent/runs/{runId}/stream): the run's feed on its own
 * connection, every event with its cursor as the SSE `id:` (what Last-Event-ID resumes from).
 */
export class RunStreamSession {
  private readonly connection: SseConnection;
  private readonly feed: RunFeed;

  constructor(
    req: Request,
    res: Response,
    run: FeedRun,
    reader: RunStreamReader,
    limits: StreamLimits,
    private readonly logger: Logger,
  ) {
    const connection = new SseConnection(req, res, limits);
    this.connection = connection;
    this.feed = new RunFeed(
      run,
      reader,
      limits.batchSize,
      {
        get closed() {
          return connection.closed;
        },
        send: (event, data, cursor) =>
          connection.write(formatSseEvent(event, data, formatCursor(cursor))),
      },
      (err) => this.fail(err),
    );
  }

  get runId(): string {
    return this.feed.runId;
  }

  onClose(listener: () => void): void {
    this.connection.onClose(listener);
  }

  /** Sends the snapshot and, when resuming, what the client missed; then follows the hints. */
  async start(resume: StreamCursor | null): Promise<void> {
    if (!this.connection.open()) return;
    await this.feed.start(resume);
    this.connection.keepAlive();
  }

  poke(kinds: Iterable<ChangeKind>): void {
    this.feed.poke(kinds);
  }

  close(reason?: string): void {
    this.connection.close(reason);
  }

  closeWithError(error: ApiError): void {
    this.connection.closeWithError(error);
  }

  private fail(err: unknown): void {
    if (err instanceof ApiError && err.code === 'resource_not_found') {
      return this.close('the run no longer exists');
    }
    this.logger.warn(`stream of run ${this.runId} ended: ${(err as Error).message}`);
    this.close(`error: ${(err as Error).message}; ${RESUME_HINT}`);
  }
}
