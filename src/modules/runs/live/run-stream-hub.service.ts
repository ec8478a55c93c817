import { BeforeApplicationShutdown, Inject, Injectable, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import type Redis from 'ioredis';
import { RedisConnections } from '../../../common/redis/redis.module';
import { ApiError } from '../../../common/errors/api-error';
import { APP_CONFIG, AppConfig } from '../../../config/app-config';
import { KeyRevocationWatch } from '../../teams';
import type { Run } from '../entities/run.entity';
import { CHANGE_KINDS, decodeRunChange, RunChanges } from './run-changes.service';
import { RunStreamReader } from './run-stream-reader.service';
import { RESUME_HINT, RunStreamSession, StreamLimits } from './run-stream-session';
import type { StreamCursor } from './stream-cursor';

const BATCH_SIZE = 200;
const DRAIN_TIMEOUT_MS = 30_000;
const KEY_REVOKED = new ApiError(
  'authentication_required',
  'the API key of this stream was revoked (or its identity deleted, its session signed out, its person removed); reconnect with a valid key',
);

/**
 * The live streams of this API replica. One Redis subscription (opened with the first stream)
 * carries every run's change hints; each goes to the sessions of its run. Streams end when the
 * application shuts down, so they never hold up the HTTP server's close.
 */
@Injectable()
export class RunStreamHub implements BeforeApplicationShutdown {
  private readonly logger = new Logger('RunStreams');
  private readonly sessions = new Map<string, Set<RunStreamSession>>();
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

  /** How many streams this replica serves (for tests and diagnostics). */
  get openStreams(): number {
    let count = 0;
    for (const set of this.sessions.values()) count += set.size;
    return count;
  }

  /**
   * Serves one stream. Subscribes before reading anything, so no change committed after the
   * snapshot's reads can go unannounced; failures up to here are answered as Oz errors. The
   * stream ends soon after `keyId` (the API key that opened it) stops authenticating; null for a
   * caller another auth strategy recognised (no key to watch).
   */
  async open(
    req: Request,
    res: Response,
    run: Pick<Run, 'id' | 'teamId' | 'config'>,
    resume: StreamCursor | null,
    keyId: string | null,
  ): Promise<void> {
    await this.subscribed();
    const session = new RunStreamSession(req, res, run, this.reader, this.limits, this.logger);
    const set = this.sessions.get(run.id) ?? new Set<RunStreamSession>();
    set.add(session);
    this.sessions.set(run.id, set);
    session.onClose(() => {
      set.delete(session);
      if (set.size === 0 && this.sessions.get(run.id) === set) this.sessions.delete(run.id);
    });
    if (this.shuttingDown) return session.close(`the server is shutting down; ${RESUME_HINT}`);
    if (keyId) session.onClose(this.keys.watch(keyId, () => session.closeWithError(KEY_REVOKED)));
    await session.start(resume);
  }

  beforeApplicationShutdown(): void {
    this.shuttingDown = true;
    for (const set of [...this.sessions.values()]) {
      for (const session of [...set]) session.close(`the server is shutting down; ${RESUME_HINT}`);
    }
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
      for (const session of this.sessions.get(change.runId) ?? []) session.poke(change.kinds);
    });
    let connected = false;
    subscriber.on('ready', () => {
      // Hints published while the connection was down are lost: every stream looks again.
      if (connected)
        for (const set of this.sessions.values()) set.forEach((s) => s.poke(CHANGE_KINDS));
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
