import { Inject, Injectable, Logger } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { PeriodicSweeper } from '../../common/periodic-task';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { artifactBlobKey, RunArtifactRepository } from '../artifacts';
import { BLOB_STORE, BlobStore } from '../blobs';
import { transcriptBlobKeysOf } from '../conversations';
import { RunContentRepository } from '../runs';
import { PendingBlobDeletionRepository } from './pending-blob-deletion.repository';

const SWEEP_INTERVAL_MS = 10 * 60_000;
/** Runs looked at per round; a sweep repeats rounds while they are full. */
const SWEEP_BATCH = 100;
const SWEEP_ROUNDS = 50;
/** Blobs deleted per sweep at most (the rest wait for the next). */
const BLOBS_PER_SWEEP = 5_000;
const BLOB_BATCH = 500;
const DAY_MS = 24 * 60 * 60_000;

/**
 * AMBIENT_RUN_CONTENT_RETENTION_DAYS: deletes the content of runs that ended that many days ago —
 * timeline, conversation messages, follow-ups, attachments, stored artifacts (plans, files,
 * screenshots) and transcript blobs — and keeps the run (its state, usage, metadata, links,
 * approvals and scores), marked `content_deleted_at`. Each run in a transaction of its own: the
 * mark, the rows, and the blob keys into `pending_blob_deletions`; the blobs are deleted after the
 * commit, and whatever a crash left pending is deleted by the next sweep (also with retention off).
 * Safe in every replica (the mark decides which one deletes a run).
 */
@Injectable()
export class RunContentRetentionSweeper extends PeriodicSweeper {
  private readonly log = new Logger('Runs');

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly content: RunContentRepository,
    private readonly artifacts: RunArtifactRepository,
    private readonly pending: PendingBlobDeletionRepository,
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

  /** Deletes the content of runs past the retention, then pending blobs; how many runs. */
  async sweep(now = new Date()): Promise<number> {
    const days = this.config.runs.contentRetentionDays;
    let deleted = 0;
    if (days > 0) {
      const cutoff = new Date(now.getTime() - days * DAY_MS);
      for (let round = 0; round < SWEEP_ROUNDS; round += 1) {
        const runIds = await this.content.endedBefore(cutoff, SWEEP_BATCH);
        let marked = 0;
        for (const runId of runIds) {
          if (await this.deleteContentOf(runId, cutoff, now)) marked += 1;
        }
        deleted += marked;
        // A full batch of which none qualified (continued or taken meanwhile) would repeat.
        if (runIds.length < SWEEP_BATCH || marked === 0) break;
      }
    }
    await this.deletePendingBlobs();
    return deleted;
  }

  private deleteContentOf(runId: string, cutoff: Date, now: Date): Promise<boolean> {
    return this.dataSource.transaction(async (manager) => {
      const run = await this.content.markDeleted(manager, runId, cutoff, now);
      if (!run) return false;
      const artifactIds = await this.artifacts.deleteStoredOfRun(manager, runId);
      await this.content.deleteContent(manager, runId);
      const keys = [...artifactIds.map(artifactBlobKey), ...transcriptBlobKeysOf(run)];
      await this.pending.add(manager, keys, now);
      return true;
    });
  }

  /** Deletes pending blobs, oldest first; a failure leaves the rest for the next sweep. */
  private async deletePendingBlobs(): Promise<void> {
    for (let done = 0; done < BLOBS_PER_SWEEP; done += BLOB_BATCH) {
      const keys = await this.pending.oldest(BLOB_BATCH);
      const gone: string[] = [];
      try {
        for (const key of keys) {
          await this.blobs.delete(key);
          gone.push(key);
        }
      } catch (err) {
        this.log.warn(`deleting blobs past retention failed: ${(err as Error).message}`);
        await this.pending.remove(gone);
        return;
      }
      await this.pending.remove(gone);
      if (keys.length < BLOB_BATCH) return;
    }
  }
}
