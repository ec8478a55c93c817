import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { ApiError } from '../../common/errors/api-error';
import { SqlRepository } from '../../database/sql-repository';
import { ENDED_STATES } from './run-state';

/** The tables of a run's content, deleted by the content retention; the `runs` row stays. */
const CONTENT_TABLES = ['run_events', 'run_messages', 'run_followups', 'run_attachments'] as const;

/** A run whose content was just marked deleted: what its blobs are named by. */
export interface RunContentDeletion {
  id: string;
  conversationId: string;
  executionCount: number;
}

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
  );
}

/**
 * A run's content (timeline, conversation messages, follow-ups, attachments) as the content
 * retention deletes it: the run is marked first (`content_deleted_at`), in the transaction that
 * deletes the rows, so a run is either whole or marked and empty.
 */
@Injectable()
export class RunContentRepository extends SqlRepository {
  /** Runs that ended before `cutoff` and still have their content, oldest end first. */
  async endedBefore(cutoff: Date, limit: number): Promise<string[]> {
    const rows = (await this.db().query(
      'SELECT id FROM runs WHERE content_deleted_at IS NULL AND finished_at < ? ' +
        `ORDER BY finished_at LIMIT ${Number(limit)}`,
      [cutoff],
    )) as { id: string }[];
    return rows.map((row) => row.id);
  }

  /**
   * Marks the run's content deleted at `now` when it still qualifies (ended before `cutoff`, not
   * continued by a follow-up since, not marked by another replica); null when it does not. The
   * run row stays locked until `manager`'s transaction ends: a follow-up waits for it, then sees
   * the mark and is refused.
   */
  async markDeleted(
    manager: EntityManager,
    runId: string,
    cutoff: Date,
    now: Date,
  ): Promise<RunContentDeletion | null> {
    const result = (await manager.query(
      'UPDATE runs SET content_deleted_at = ? WHERE id = ? AND content_deleted_at IS NULL ' +
        'AND finished_at < ? AND state IN (?)',
      [now, runId, cutoff, ENDED_STATES],
    )) as { affectedRows: number };
    if (result.affectedRows !== 1) return null;
    const [row] = (await manager.query(
      'SELECT conversation_id, execution_count FROM runs WHERE id = ?',
      [runId],
    )) as { conversation_id: string; execution_count: number }[];
    return {
      id: runId,
      conversationId: row.conversation_id,
      executionCount: Number(row.execution_count),
    };
  }

  /** Deletes the run's timeline, conversation messages, follow-ups and attachments. */
  async deleteContent(manager: EntityManager, runId: string): Promise<void> {
    for (const table of CONTENT_TABLES) {
      await manager.query(`DELETE FROM ${table} WHERE run_id = ?`, [runId]);
    }
  }
}
