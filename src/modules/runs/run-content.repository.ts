import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { ApiError } from '../../common/errors/api-error';
import { SqlRepository } from '../../database/sql-repository';
import { ENDED_STATES, RunState } from './run-state';

/** The tables of a run's content, deleted by the content retention; the `runs` row stays. */
const CONTENT_TABLES = ['run_events', 'run_messages', 'run_followups', 'run_attachments'] as const;

/** A run whose content was just marked deleted: what its blobs are named by. */
export interface RunContentDeletion {
  id: string;
  conversationId: string;
  executionCount: number;
}

/** The title of the 404 for content the retention deleted: what tells it from "nothing yet". */
export const RUN_CONTENT_DELETED_TITLE = 'Run content deleted';

/**
 * What a request about a run's content answers once the retention deleted it: 404, saying when
 * and why, so that a client tells it from a run that never had any.
 */
export function contentDeletedError(
  run: { id: string; contentDeletedAt: Date | null },
  what: string,
): ApiError {
  return new ApiError(
    'resource_not_found',
    `run ${run.id}: its ${what} was deleted at ${run.contentDeletedAt?.toISOString()} by the ` +
      'content retention (AMBIENT_RUN_CONTENT_RETENTION_DAYS); the run itself is kept',
    { title: RUN_CONTENT_DELETED_TITLE },
  );
}

/**
 * What asking to continue (or judge) a conversation the retention deleted answers: 409, not
 * retryable, naming the setting. `subject` is what was deleted, `consequence` why that refuses.
 */
export function contentDeletedConflict(
  subject: string,
  consequence: string,
  title?: string,
): ApiError {
  return new ApiError(
    'conflict',
    `${subject} was deleted by the content retention (AMBIENT_RUN_CONTENT_RETENTION_DAYS): ` +
      consequence,
    { retryable: false, ...(title ? { title } : {}) },
  );
}

/**
 * A run's content (timeline, conversation messages, follow-ups, attachments) as the content
 * retention deletes it. The unit is a conversation: its runs share their history, so their
 * content goes together, once every one of them ended before the cut-off. The runs are marked
 * (`content_deleted_at`) in the transaction that deletes the rows, so a run is either whole or
 * marked and empty.
 */
@Injectable()
export class RunContentRepository extends SqlRepository {
  /**
   * Runs that ended before `cutoff` and still have their content, oldest end first, after the
   * `after` one (the keyset of a sweep that goes past runs whose conversation goes on).
   */
  async endedBefore(
    cutoff: Date,
    limit: number,
    after?: { finishedAt: Date; id: string },
  ): Promise<{ id: string; conversationId: string; finishedAt: Date }[]> {
    const rows = (await this.db().query(
      'SELECT id, conversation_id, finished_at FROM runs ' +
        'WHERE content_deleted_at IS NULL AND finished_at < ?' +
        (after ? ' AND (finished_at > ? OR (finished_at = ? AND id > ?))' : '') +
        ` ORDER BY finished_at, id LIMIT ${Number(limit)}`,
      after ? [cutoff, after.finishedAt, after.finishedAt, after.id] : [cutoff],
    )) as { id: string; conversation_id: string; finished_at: Date }[];
    return rows.map((row) => ({
      id: row.id,
      conversationId: row.conversation_id,
      finishedAt: row.finished_at,
    }));
  }

  /**
   * Marks the content of the conversation's runs deleted at `now` when every run of it has ended
   * before `cutoff` (or was marked before) and none has a follow-up stored since the cut-off that
   * its continuation has not taken yet; the runs marked, none when the conversation goes on. Its
   * rows are locked (the first statement of the transaction) and stay locked until `manager`'s
   * transaction ends: a follow-up to one of them waits, then sees the mark and is refused.
   */
  async markConversationDeleted(
    manager: EntityManager,
    conversationId: string,
    cutoff: Date,
    now: Date,
  ): Promise<RunContentDeletion[]> {
    const unmarked = await this.unmarkedIfAllEnded(conversationId, cutoff, manager);
    if (unmarked.length === 0) return [];
    const ids = unmarked.map((run) => run.id);
    // A follow-up committed to an ended run that its continuation has not re-queued yet (a
    // locking read: the latest committed rows, whatever the transaction's snapshot); one from
    // before the cut-off was never routed (a crash in between) and goes with the content.
    const waiting = (await manager.query(
      'SELECT 1 FROM run_followups WHERE run_id IN (?) AND consumed_at IS NULL ' +
        'AND dropped_at IS NULL AND created_at >= ? LIMIT 1 LOCK IN SHARE MODE',
      [ids, cutoff],
    )) as unknown[];
    if (waiting.length > 0) return [];
    await manager.query('UPDATE runs SET content_deleted_at = ? WHERE id IN (?)', [now, ids]);
    return unmarked.map((run) => ({
      id: run.id,
      conversationId,
      executionCount: Number(run.execution_count),
    }));
  }

  /**
   * Whether every run of the conversation ended before `cutoff` and one is not marked yet: a plain
   * read, so that a sweep locks no conversation that goes on.
   */
  async conversationDue(conversationId: string, cutoff: Date): Promise<boolean> {
    return (await this.unmarkedIfAllEnded(conversationId, cutoff)).length > 0;
  }

  /**
   * The conversation's runs not marked yet, when every run of it ended before `cutoff`; else none.
   * With `manager`, a locking read in its transaction.
   */
  private async unmarkedIfAllEnded(
    conversationId: string,
    cutoff: Date,
    manager?: EntityManager,
  ): Promise<{ id: string; execution_count: number }[]> {
    const runs = (await this.db(manager).query(
      'SELECT id, state, finished_at, content_deleted_at, execution_count FROM runs ' +
        `WHERE conversation_id = ?${manager ? ' FOR UPDATE' : ''}`,
      [conversationId],
    )) as {
      id: string;
      state: RunState;
      finished_at: Date | null;
      content_deleted_at: Date | null;
      execution_count: number;
    }[];
    const ended = (run: (typeof runs)[number]) =>
      run.content_deleted_at !== null ||
      (ENDED_STATES.includes(run.state) && run.finished_at !== null && run.finished_at < cutoff);
    return runs.every(ended) ? runs.filter((run) => run.content_deleted_at === null) : [];
  }

  /** Deletes the runs' timelines, conversation messages, follow-ups and attachments. */
  async deleteContent(manager: EntityManager, runIds: string[]): Promise<void> {
    if (runIds.length === 0) return;
    for (const table of CONTENT_TABLES) {
      await manager.query(`DELETE FROM ${table} WHERE run_id IN (?)`, [runIds]);
    }
  }
}
