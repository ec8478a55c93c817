import { Inject, Injectable, Logger } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { PeriodicSweeper } from '../../common/periodic-task';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { whileNamedLockHeld } from '../../database/named-lock';
import { artifactBlobKey, RunArtifactRepository } from '../artifacts';
import { BLOB_STORE, BlobStore } from '../blobs';
import { transcriptBlobKeysOf } from '../conversations';
import { RunContentRepository } from '../runs';
import { PendingBlobDeletionRepository } from './pending-blob-deletion.repository';
import { SweepPositionRepository } from './sweep-position.repository';

const SWEEP_INTERVAL_MS = 10 * 60_000;
/** Runs looked at per round, oldest end first; a sweep goes on while rounds are full. */
const SWEEP_BATCH = 100;
const SWEEP_ROUNDS = 50;
/** Blobs deleted per sweep at most (the rest wait for the next), this many at once. */
const BLOBS_PER_SWEEP = 50_000;
const BLOB_BATCH = 500;
const BLOB_CONCURRENCY = 16;
const DAY_MS = 24 * 60 * 60_000;
/** The named lock the sweep holds, and the name of its walk's position. */
const SWEEP_NAME = 'content_retention';

/**
 * AMBIENT_RUN_CONTENT_RETENTION_DAYS: deletes the content of runs that ended that many days ago —
 * timeline, conversation messages, follow-ups, attachments, stored artifacts (plans, files,
 * screenshots) and transcript blobs — and keeps the runs (their state, usage, metadata, links,
 * approvals and scores), marked `content_deleted_at`. A conversation's runs go together, once the
 * last of them ended before the cut-off (RunContentRepository): in one transaction the marks, the
 * rows, and the blob keys into `pending_blob_deletions`; the blobs are deleted after the commit,
 * and whatever a crash left pending is deleted by the next sweep (also with the retention off).
 * Sweeps never overlap: a sweep holds a named lock of the database, and a replica whose turn comes
 * while another sweeps skips it. The walk's position is shared (`sweep_positions`): N replicas
 * sweep up to N times an interval, each going on where the last one stopped, so none walks again
 * what another just did. The runs' row locks and marks still decide, should two sweeps meet.
 */
@Injectable()
export class RunContentRetentionSweeper extends PeriodicSweeper {
  private readonly log = new Logger('Runs');

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly content: RunContentRepository,
    private readonly artifacts: RunArtifactRepository,
    private readonly pending: PendingBlobDeletionRepository,
    private readonly positions: SweepPositionRepository,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    registry: SchedulerRegistry,
  ) {
    super({
      name: 'run content retention sweep',
      intervalMs: SWEEP_INTERVAL_MS,
      logger: new Logger('Runs'),
      registry,
      swept: (runs) => `content of ${runs} run(s) past AMBIENT_RUN_CONTENT_RETENTION_DAYS deleted`,
    });
  }

  /**
   * Deletes the content of conversations past the retention, then pending blobs; how many runs.
   * The walk goes on where the last sweep (of any replica) stopped, and starts again from the
   * oldest end once it reached the newest: runs of conversations that go on stay behind, and
   * never stop it.
   */
  async sweep(now = new Date()): Promise<number> {
    const outcome = await whileNamedLockHeld(this.dataSource, SWEEP_NAME, 0, () =>
      this.sweepHoldingLock(now),
    );
    if (!outcome.locked) {
      this.log.debug('another replica is sweeping run content; this one skips its turn');
      return 0;
    }
    return outcome.value;
  }

  private async sweepHoldingLock(now: Date): Promise<number> {
    const days = this.config.runs.contentRetentionDays;
    let deleted = 0;
    if (days > 0) {
      const cutoff = new Date(now.getTime() - days * DAY_MS);
      const done = new Set<string>();
      let walkedTo = await this.positions.get(SWEEP_NAME);
      for (let round = 0; round < SWEEP_ROUNDS; round += 1) {
        const runs = await this.content.endedBefore(cutoff, SWEEP_BATCH, walkedTo);
        walkedTo = runs.length < SWEEP_BATCH ? undefined : runs[runs.length - 1];
        for (const run of runs) {
          if (done.has(run.conversationId)) continue;
          done.add(run.conversationId);
          try {
            if (!(await this.content.conversationDue(run.conversationId, cutoff))) continue;
            deleted += await this.deleteConversationContent(run.conversationId, cutoff, now);
          } catch (err) {
            // One conversation that fails (a lock wait, a deadlock) must not hold back the others.
            this.log.warn(
              `deleting conversation ${run.conversationId}'s content failed: ${(err as Error).message}`,
            );
          }
        }
        // After the round: a sweep cut short goes on from its last full round. A failed write
        // only makes a later sweep look at these runs again.
        await this.positions.set(SWEEP_NAME, walkedTo, now).catch((err: Error) => {
          this.log.warn(`recording the content retention's walk position failed: ${err.message}`);
        });
        if (!walkedTo) break;
      }
    }
    await this.deletePendingBlobs();
    return deleted;
  }

  /** The conversation's runs' content, when all of them are past the retention; how many runs. */
  private deleteConversationContent(
    conversationId: string,
    cutoff: Date,
    now: Date,
  ): Promise<number> {
    return this.dataSource.transaction(async (manager) => {
      const runs = await this.content.markConversationDeleted(manager, conversationId, cutoff, now);
      if (runs.length === 0) return 0;
      const runIds = runs.map((run) => run.id);
      const artifactIds = await this.artifacts.deleteStoredOfRuns(manager, runIds);
      await this.content.deleteContent(manager, runIds);
      const keys = [...artifactIds.map(artifactBlobKey), ...runs.flatMap(transcriptBlobKeysOf)];
      await this.pending.add(manager, [...new Set(keys)], now);
      return runs.length;
    });
  }

  /** Deletes pending blobs, oldest first; a failure leaves the rest for the next sweep. */
  private async deletePendingBlobs(): Promise<void> {
    for (let done = 0; done < BLOBS_PER_SWEEP; done += BLOB_BATCH) {
      const keys = await this.pending.oldest(BLOB_BATCH);
      const gone: string[] = [];
      let failure: Error | null = null;
      for (let i = 0; i < keys.length && !failure; i += BLOB_CONCURRENCY) {
        const slice = keys.slice(i, i + BLOB_CONCURRENCY);
        const results = await Promise.allSettled(slice.map((key) => this.blobs.delete(key)));
        results.forEach((result, j) => {
          if (result.status === 'fulfilled') gone.push(slice[j]);
          else failure ??= result.reason as Error;
        });
      }
      await this.pending.remove(gone);
      if (failure) {
        this.log.warn(`deleting blobs past retention failed: ${(failure as Error).message}`);
        return;
      }
      if (keys.length < BLOB_BATCH) return;
    }
  }
}
