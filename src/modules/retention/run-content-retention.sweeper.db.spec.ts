import { SchedulerRegistry } from '@nestjs/schedule';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { insertFollowup, insertRun } from '../../../test/support/unit/run-rows';
import { useTestDatabase } from '../../../test/support/unit/test-database';
import type { AppConfig } from '../../config/app-config';
import { databaseLockName } from '../../database/named-lock';
import { ArtifactWriter, RunArtifactRepository } from '../artifacts';
import { BlobStore, LocalDiskBlobStore } from '../blobs';
import { TranscriptWriter } from '../conversations';
import { ConversationRunRepository, RunContentRepository } from '../runs';
import { PendingBlobDeletionRepository } from './pending-blob-deletion.repository';
import { RunContentRetentionSweeper } from './run-content-retention.sweeper';
import { SweepPositionRepository } from './sweep-position.repository';

const DAY_MS = 24 * 60 * 60_000;
const NOW = new Date('2026-12-07T12:00:00.000Z');

/** The content retention on a real database and disk: what goes, what stays, and a crash's leftovers. */
describe('RunContentRetentionSweeper (database)', () => {
  const db = useTestDatabase('content_retention');
  let root: string;
  let blobs: LocalDiskBlobStore;

  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), 'ambient-retention-'));
    blobs = new LocalDiskBlobStore(root);
    // Each case sweeps the whole database: it starts without another case's runs.
    for (const table of [
      'run_events',
      'run_messages',
      'run_followups',
      'run_attachments',
      'run_metadata',
      'run_artifacts',
      'pending_blob_deletions',
      'sweep_positions',
      'runs',
    ]) {
      await db.dataSource.query(`DELETE FROM ${table}`);
    }
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const sweeper = (retentionDays: number, store: BlobStore = blobs) =>
    new RunContentRetentionSweeper(
      db.dataSource,
      new RunContentRepository(db.dataSource),
      new RunArtifactRepository(db.dataSource),
      new PendingBlobDeletionRepository(db.dataSource),
      new SweepPositionRepository(db.dataSource),
      store,
      { runs: { contentRetentionDays: retentionDays } } as AppConfig,
      new SchedulerRegistry(),
    );
  const count = async (table: string, runId: string) => {
    const [row] = (await db.dataSource.query(
      `SELECT COUNT(*) AS n FROM ${table} WHERE run_id = ?`,
      [runId],
    )) as { n: string }[];
    return Number(row.n);
  };
  const pendingKeys = async () =>
    (
      (await db.dataSource.query('SELECT blob_key FROM pending_blob_deletions')) as {
        blob_key: string;
      }[]
    ).map((row) => row.blob_key);
  const artifactTypes = async (runId: string) =>
    (
      (await db.dataSource.query(
        'SELECT artifact_type FROM run_artifacts WHERE run_id = ? ORDER BY artifact_type',
        [runId],
      )) as { artifact_type: string }[]
    ).map((row) => row.artifact_type);
  const contentDeletedAt = async (runId: string) => {
    const [row] = (await db.dataSource.query(
      'SELECT state, content_deleted_at FROM runs WHERE id = ?',
      [runId],
    )) as { state: string; content_deleted_at: Date | null }[];
    return row;
  };

  /**
   * A run with everything a run keeps: two executions' events and messages, a follow-up, an
   * attachment, metadata, a file, a plan and a pull request reported, a vendor CLI's raw stream
   * and a downloaded transcript. `endedDaysAgo` null: continued by a follow-up (QUEUED, no end).
   */
  async function runWithContent(endedDaysAgo: number | null): Promise<{
    id: string;
    blobKeys: string[];
  }> {
    const id = await insertRun(db.dataSource, db.teamId, {
      state: endedDaysAgo === null ? 'QUEUED' : 'SUCCEEDED',
      executionCount: 2,
    });
    const finishedAt =
      endedDaysAgo === null ? null : new Date(NOW.getTime() - endedDaysAgo * DAY_MS);
    await db.dataSource.query('UPDATE runs SET finished_at = ? WHERE id = ?', [finishedAt, id]);
    for (const executionId of [1, 2]) {
      await db.dataSource.query(
        `INSERT INTO run_events (event_uuid, run_id, execution_id, event_type, occurred_at, payload)
         VALUES (?, ?, ?, 'command_output', ?, ?)`,
        [randomUUID(), id, executionId, NOW, JSON.stringify({ text: 'x'.repeat(100) })],
      );
      await db.dataSource.query(
        `INSERT INTO run_messages (run_id, execution_id, message, created_at) VALUES (?, ?, ?, ?)`,
        [id, executionId, JSON.stringify({ role: 'assistant', content: 'done' }), NOW],
      );
    }
    await insertFollowup(db.dataSource, id, { consumed: true });
    await db.dataSource.query(
      `INSERT INTO run_attachments (id, run_id, file_name, mime_type, size_bytes, data, created_at)
       VALUES (?, ?, 'notes.txt', 'text/plain', 5, 'hello', ?)`,
      [randomUUID(), id, NOW],
    );
    await db.dataSource.query(
      `INSERT INTO run_metadata (run_id, team_id, meta_key, meta_value) VALUES (?, ?, 'ticket', 'T-1')`,
      [id, db.teamId],
    );
    const writer = new ArtifactWriter(blobs, new RunArtifactRepository(db.dataSource));
    const run = { id, teamId: db.teamId };
    const file = await writer.report(run, {
      isPublic: false,
      type: 'FILE',
      file: Buffer.from('report'),
      filename: 'report.txt',
      filepath: 'out/report.txt',
      mimeType: 'text/plain',
    });
    const plan = await writer.report(run, { isPublic: false, type: 'PLAN', content: '1. do it' });
    await writer.report(run, {
      isPublic: false,
      type: 'PULL_REQUEST',
      url: `https://git.example.com/pr/${id}`,
      branch: 'fix',
      status: 'OPEN',
    });
    const transcripts = new TranscriptWriter(new ConversationRunRepository(db.dataSource), blobs);
    await transcripts.keepRawStream(id, { executionId: 2, stream: '{"raw":"cli"}\n' });
    const rendered = `transcripts/run-${id}-rendered.jsonl`;
    await blobs.put(rendered, '{}\n');
    return {
      id,
      blobKeys: [
        `artifacts/${file.id}`,
        `artifacts/${plan.id}`,
        `transcripts/run-${id}-execution-2-raw.jsonl`,
        rendered,
      ],
    };
  }

  const exists = async (keys: string[]) => Promise.all(keys.map((key) => blobs.exists(key)));

  it("deletes a run's content past the retention and keeps the run, its metadata and its links", async () => {
    const old = await runWithContent(8);
    const recent = await runWithContent(6);
    const continued = await runWithContent(null);
    expect(await exists(old.blobKeys)).toEqual([true, true, true, true]);

    expect(await sweeper(7).sweep(NOW)).toBe(1);

    expect(await contentDeletedAt(old.id)).toEqual({ state: 'SUCCEEDED', content_deleted_at: NOW });
    for (const table of ['run_events', 'run_messages', 'run_followups', 'run_attachments']) {
      expect([table, await count(table, old.id)]).toEqual([table, 0]);
    }
    expect(await artifactTypes(old.id)).toEqual(['PULL_REQUEST']);
    expect(await count('run_metadata', old.id)).toBe(1);
    expect(await exists(old.blobKeys)).toEqual([false, false, false, false]);
    expect(await pendingKeys()).toEqual([]);

    for (const kept of [recent, continued]) {
      expect((await contentDeletedAt(kept.id)).content_deleted_at).toBeNull();
      expect(await count('run_events', kept.id)).toBe(2);
      expect(await count('run_messages', kept.id)).toBe(2);
      expect(await artifactTypes(kept.id)).toEqual(['FILE', 'PLAN', 'PULL_REQUEST']);
      expect(await exists(kept.blobKeys)).toEqual([true, true, true, true]);
    }
    expect(await sweeper(7).sweep(NOW)).toBe(0);
  });

  it('deletes nothing with the retention off', async () => {
    const old = await runWithContent(3650);
    expect(await sweeper(0).sweep(NOW)).toBe(0);
    expect((await contentDeletedAt(old.id)).content_deleted_at).toBeNull();
    expect(await count('run_events', old.id)).toBe(2);
    expect(await exists(old.blobKeys)).toEqual([true, true, true, true]);
  });

  it('leaves blobs it could not delete pending, and deletes them at the next sweep', async () => {
    const old = await runWithContent(30);
    const storeDown: BlobStore = {
      put: (key, data) => blobs.put(key, data),
      get: (key) => blobs.get(key),
      openStream: (key) => blobs.openStream(key),
      exists: (key) => blobs.exists(key),
      delete: () => Promise.reject(new Error('blob store unreachable')),
    };
    expect(await sweeper(7, storeDown).sweep(NOW)).toBe(1);
    expect(await count('run_events', old.id)).toBe(0);
    expect(await pendingKeys()).toEqual(expect.arrayContaining(old.blobKeys));
    expect(await exists(old.blobKeys)).toEqual([true, true, true, true]);

    // The next sweep, even with the retention since turned off, finishes the deletion.
    expect(await sweeper(0).sweep(NOW)).toBe(0);
    expect(await exists(old.blobKeys)).toEqual([false, false, false, false]);
    expect(await pendingKeys()).toEqual([]);
  });

  it('does not mark a run continued since it was listed, nor one another replica marked', async () => {
    const content = new RunContentRepository(db.dataSource);
    const cutoff = new Date(NOW.getTime() - 7 * DAY_MS);
    const old = await runWithContent(8);
    expect((await content.endedBefore(cutoff, 10)).map((run) => run.id)).toEqual([old.id]);
    const mark = () =>
      db.dataSource.transaction((manager) =>
        content.markConversationDeleted(manager, old.id, cutoff, NOW),
      );
    // A follow-up continued it after the sweep listed it.
    await db.dataSource.query(`UPDATE runs SET state = 'QUEUED' WHERE id = ?`, [old.id]);
    expect(await mark()).toEqual([]);
    await db.dataSource.query(`UPDATE runs SET state = 'SUCCEEDED' WHERE id = ?`, [old.id]);
    expect(await mark()).toEqual([{ id: old.id, conversationId: old.id, executionCount: 2 }]);
    expect(await mark()).toEqual([]);
    expect(await content.endedBefore(cutoff, 10)).toEqual([]);
  });

  it('keeps a run with a follow-up stored but not yet continued', async () => {
    const old = await runWithContent(8);
    // Committed by a follow-up whose continuation has not re-queued the run yet.
    await insertFollowup(db.dataSource, old.id);
    expect(await sweeper(7).sweep(NOW)).toBe(0);
    expect(await count('run_followups', old.id)).toBe(2);
    expect((await contentDeletedAt(old.id)).content_deleted_at).toBeNull();
  });

  it('takes a follow-up from before the cut-off, never continued, with the content', async () => {
    const old = await runWithContent(30);
    const stale = await insertFollowup(db.dataSource, old.id);
    await db.dataSource.query('UPDATE run_followups SET created_at = ? WHERE id = ?', [
      new Date(NOW.getTime() - 20 * DAY_MS),
      stale,
    ]);
    expect(await sweeper(7).sweep(NOW)).toBe(1);
    expect(await count('run_followups', old.id)).toBe(0);
  });

  it("deletes a conversation's runs together, once the last of them is past the retention", async () => {
    const first = await runWithContent(30);
    const second = await runWithContent(2);
    await db.dataSource.query('UPDATE runs SET conversation_id = ? WHERE id = ?', [
      first.id,
      second.id,
    ]);
    expect(await sweeper(7).sweep(NOW)).toBe(0);
    expect(await count('run_messages', first.id)).toBe(2);
    expect(await exists(first.blobKeys)).toEqual([true, true, true, true]);

    await db.dataSource.query('UPDATE runs SET finished_at = ? WHERE id = ?', [
      new Date(NOW.getTime() - 8 * DAY_MS),
      second.id,
    ]);
    expect(await sweeper(7).sweep(NOW)).toBe(2);
    for (const run of [first, second]) {
      expect(await count('run_messages', run.id)).toBe(0);
      expect(await exists(run.blobKeys)).toEqual([false, false, false, false]);
    }
  });

  it('skips its turn while another replica sweeps, and sweeps once that one is done', async () => {
    const old = await runWithContent(8);
    const otherReplica = db.dataSource.createQueryRunner();
    await otherReplica.connect();
    try {
      const lock = databaseLockName('content_retention', String(db.dataSource.options.database));
      expect(await otherReplica.query('SELECT GET_LOCK(?, 0) AS locked', [lock])).toEqual([
        { locked: 1 },
      ]);
      expect(await sweeper(7).sweep(NOW)).toBe(0);
      expect((await contentDeletedAt(old.id)).content_deleted_at).toBeNull();
      expect(await count('run_events', old.id)).toBe(2);
      await otherReplica.query('SELECT RELEASE_LOCK(?)', [lock]);
    } finally {
      await otherReplica.release();
    }
    expect(await sweeper(7).sweep(NOW)).toBe(1);
    expect(await count('run_events', old.id)).toBe(0);
  });

  it('goes past conversations that go on to the older ones behind them', async () => {
    // More runs ended before the cut-off whose conversation goes on than a round looks at.
    const goingOn = await runWithContent(1);
    const stuck: string[] = [];
    for (let i = 0; i < 120; i++) {
      stuck.push(await insertRun(db.dataSource, db.teamId, { state: 'SUCCEEDED' }));
    }
    await db.dataSource.query(
      'UPDATE runs SET conversation_id = ?, finished_at = ? WHERE id IN (?)',
      [goingOn.id, new Date(NOW.getTime() - 20 * DAY_MS), stuck],
    );
    const behind = await runWithContent(10);
    expect(await sweeper(7).sweep(NOW)).toBe(1);
    expect((await contentDeletedAt(behind.id)).content_deleted_at).toEqual(NOW);
    expect((await contentDeletedAt(goingOn.id)).content_deleted_at).toBeNull();
  });

  it('goes on where the last sweep of any replica stopped, and from the oldest once it reached the newest', async () => {
    const older = await runWithContent(30);
    const newer = await runWithContent(20);
    const [olderRow] = (await db.dataSource.query('SELECT finished_at FROM runs WHERE id = ?', [
      older.id,
    ])) as { finished_at: Date }[];
    // Another replica's sweep stopped at the older run (its round was full).
    const positions = new SweepPositionRepository(db.dataSource);
    await positions.set(
      'content_retention',
      { finishedAt: olderRow.finished_at, id: older.id },
      NOW,
    );

    expect(await sweeper(7).sweep(NOW)).toBe(1);
    expect((await contentDeletedAt(newer.id)).content_deleted_at).toEqual(NOW);
    expect((await contentDeletedAt(older.id)).content_deleted_at).toBeNull();
    // It reached the newest: the next sweep, in whichever replica, starts from the oldest.
    expect(await positions.get('content_retention')).toBeUndefined();
    expect(await sweeper(7).sweep(NOW)).toBe(1);
    expect((await contentDeletedAt(older.id)).content_deleted_at).toEqual(NOW);
  });
});
