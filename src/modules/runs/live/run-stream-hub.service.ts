import { BeforeApplicationShutdown, Inject, Injectable, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import type Redis from 'ioredis';
import { RedisConnections } from '../../../common/redis/redis.module';
import { ApiError } from '../../../common/errors/api-error';
import { APP_CONFIG, AppConfig } from '../../../config/app-config';
import { KeyRevocationWatch } from '../../teams';
import { LiveRun, LiveRunsSession } from './live-runs-session';
import type { FeedRun } from './run-feed';
import { CHANGE_KINDS, ChangeKind, decodeRunChange, RunChanges } from './run-changes.service';
import { RunStreamReader } from './run-stream-reader.service';
import { RESUME_HINT, RunStreamSession, StreamLimits } from './run-stream-session';
import type { StreamCursor } from './stream-cursor';

const BATCH_SIZE = 200;
const DRAIN_TIMEOUT_MS = 30_000;
const KEY_REVOKED = new ApiError(
  'authentication_required',
  'the API key of this stream was revoked (or its identity deleted, its session signed out, its person removed); reconnect with a valid key',
);

/** What a change hint reaches: a per-run stream, or one run's feed on a live-runs stream. */
interface Follower {
  poke(kinds: Iterable<ChangeKind>): void;
}

/** An open stream, of one run or of several. */
interface OpenStream {
  close(reason?: string): void;
  closeWithError(error: ApiError): void;
  onClose(listener: () => void): void;
}

/**
 * The live streams of this API replica. One Redis subscription (opened with the first stream)
 * carries every run's change hints; each goes to the followers of its run. Streams end when the
 * application shuts down, so they never hold up the HTTP server's close.
 */
@Injectable()
export class RunStreamHub implements BeforeApplicationShutdown {
  private readonly logger = new Logger('RunStreams');
  private readonly followers = new Map<string, Set<Follower>>();
  private readonly streams = new Set<OpenStream>();
  private readonly limits: StreamLimits;
  private subscribing: Promise<Redis> | null = null;
  private shuttingDown = false;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly connections: RedisConnections,
    private readonly changes: RunChanges,
    private readonly reader: RunStreamReader,
    private readonly keys: KeyRevocationWatch,
  ) {
    this.limits = {
      heartbeatMs: config.runs.streamHeartbeatMs,
      batchSize: BATCH_SIZE,
      drainTimeoutMs: DRAIN_TIMEOUT_MS,
    };
  }

  /** How many streams (connections) this replica serves, for tests and diagnostics. */
  get openStreams(): number {
    return this.streams.size;
  }

  /** How many runs those streams follow (a live-runs stream follows several). */
  get followedRuns(): number {
    let count = 0;
    for (const set of this.followers.values()) count += set.size;
    return count;
  }

  /**
   * Serves one run's stream. Subscribes before reading anything, so no change committed after
   * the snapshot's reads can go unannounced; failures up to here are answered as Oz errors. The
   * stream ends soon after `keyId` (the API key that opened it) stops authenticating; null for a
   * caller another auth strategy recognised (no key to watch).
   */
  async open(
    req: Request,
    res: Response,
    run: FeedRun,
    resume: StreamCursor | null,
    keyId: string | null,
  ): Promise<void> {
    await this.subscribed();
    const session = new RunStreamSession(req, res, run, this.reader, this.limits, this.logger);
    session.onClose(this.follow(run.id, session));
    if (!this.admit(session, keyId)) return;
    await session.start(resume);
  }

  /** Serves a stream of several runs (see LiveRunsSession), on the same terms as `open`. */
  async openLive(
    req: Request,
    res: Response,
    runs: LiveRun[],
    keyId: string | null,
  ): Promise<void> {
    await this.subscribed();
    const session = new LiveRunsSession(req, res, this.reader, this.limits, this.logger);
    if (!this.admit(session.connection, keyId)) return;
    await session.start(runs, (runId, feed) => this.follow(runId, feed));
  }

  beforeApplicationShutdown(): void {
    this.shuttingDown = true;
    for (const stream of [...this.streams]) {
      stream.close(`the server is shutting down; ${RESUME_HINT}`);
    }
  }

  /** Counts the stream until it closes; false when it may not start (shutting down). */
  private admit(stream: OpenStream, keyId: string | null): boolean {
    this.streams.add(stream);
    stream.onClose(() => this.streams.delete(stream));
    if (this.shuttingDown) {
      stream.close(`the server is shutting down; ${RESUME_HINT}`);
      return false;
    }
    if (keyId) stream.onClose(this.keys.watch(keyId, () => stream.closeWithError(KEY_REVOKED)));
    return true;
  }

  /** Sends the run's hints to `follower` until the returned function is called. */
  private follow(runId: string, follower: Follower): () => void {
    const set = this.followers.get(runId) ?? new Set<Follower>();
    set.add(follower);
    this.followers.set(runId, set);
    return () => {
      set.delete(follower);
      if (set.size === 0 && this.followers.get(runId) === set) this.followers.delete(runId);
    };
  }

  private subscribed(): Promise<Redis> {
    this.subscribing ??= this.subscribe().catch((err: Error) => {
      this.subscribing = null; // the next stream tries again
      throw err;
    });
    return this.subscribing;
  }

  private async subscribe(): Promise<Redis> {
    const subscriber = this.connections.create();
    subscriber.on('message', (_channel: string, text: string) => {
      const change = decodeRunChange(text);
      if (!change) return;
      for (const follower of this.followers.get(change.runId) ?? []) follower.poke(change.kinds);
    });
    let connected = false;
    subscriber.on('ready', () => {
      // Hints published while the connection was down are lost: every stream looks again.
      if (connected)
        for (const set of this.followers.values()) set.forEach((f) => f.poke(CHANGE_KINDS));
      connected = true;
    });
    try {
      await subscriber.subscribe(this.changes.channel);
    } catch (err) {
      subscriber.disconnect();
      throw err;
    }
    return subscriber;
  }
}
