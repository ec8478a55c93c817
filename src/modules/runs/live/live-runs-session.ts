import type { Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { formatSseEvent } from '../../../common/sse';
import { ApiError } from '../../../common/errors/api-error';
import { FeedRun, RunFeed } from './run-feed';
import type { RunStreamReader } from './run-stream-reader.service';
import { SseConnection } from './sse-connection';
import type { StreamLimits } from './run-stream-session';
import { formatCursor, StreamCursor } from './stream-cursor';

/** A run a live-runs stream was asked for: `run` is null when the caller's team cannot see it. */
export interface LiveRun {
  runId: string;
  run: FeedRun | null;
  resume: StreamCursor | null;
}

/** Puts a feed where the run's change hints reach it; returns how to take it away. */
export type FollowRun = (runId: string, feed: RunFeed) => () => void;

/**
 * One client's stream of several runs on one connection (the console's shared stream): each run's
 * feed as the per-run stream has it, every event's data wrapped as `{run_id, id, data}` (`id`: the
 * run's cursor, for the next connection's `runs=<run id>@<id>`). A run the caller cannot see, or
 * that is deleted while streaming, gets one `event: gone` (`{run_id, error}`, the Oz Error the
 * run's own GET answers) and the stream goes on with the others.
 */
export class LiveRunsSession {
  readonly connection: SseConnection;

  constructor(
    req: Request,
    res: Response,
    private readonly reader: RunStreamReader,
    private readonly limits: StreamLimits,
    private readonly logger: Logger,
  ) {
    this.connection = new SseConnection(req, res, limits);
  }

  /** Starts the runs' feeds one after the other (each sends its snapshot first). */
  async start(runs: LiveRun[], follow: FollowRun): Promise<void> {
    if (!this.connection.open()) return;
    for (const { runId, run, resume } of runs) {
      if (this.connection.closed) return;
      if (!run) {
        await this.gone(runId);
        continue;
      }
      let unfollow = (): void => undefined;
      const feed = new RunFeed(run, this.reader, this.limits.batchSize, this.sink(runId), (err) =>
        this.failed(runId, unfollow, err),
      );
      unfollow = follow(runId, feed);
      this.connection.onClose(unfollow);
      await feed.start(resume);
    }
    this.connection.keepAlive();
  }

  private sink(runId: string) {
    const connection = this.connection;
    return {
      get closed() {
        return connection.closed;
      },
      send: (event: string, data: unknown, cursor: StreamCursor) =>
        connection.write(formatSseEvent(event, { run_id: runId, id: formatCursor(cursor), data })),
    };
  }

  private gone(runId: string): Promise<void> {
    const error = this.connection.problem(ApiError.notFound(`run "${runId}"`));
    return this.connection.write(formatSseEvent('gone', { run_id: runId, error }));
  }

  private failed(runId: string, unfollow: () => void, err: unknown): void {
    unfollow();
    if (err instanceof ApiError && err.code === 'resource_not_found') {
      void this.gone(runId);
      return;
    }
    this.logger.warn(`live stream of run ${runId} ended: ${(err as Error).message}`);
    this.connection.close(`error: ${(err as Error).message}; reconnect to continue`);
  }
}
