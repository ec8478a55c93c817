import { Injectable } from '@nestjs/common';
import { EntityManager, In, IsNull, Not } from 'typeorm';
import { jsonColumn } from '../../database/json-column';
import { ConversationRuns } from '../artifacts';
import { COMMAND_EVENTS } from './command-events';
import { RunEvent } from './entities/run-event.entity';
import { RunMessage } from './entities/run-message.entity';
import { Run } from './entities/run.entity';
import { SqlRepository } from '../../database/sql-repository';

export interface ConversationRunMark {
  id: string;
  teamId: string;
  contentDeleted: boolean;
}

/** The runs of a conversation and their stored messages (`runs.conversation_id`, `run_messages`). */
@Injectable()
export class ConversationRunRepository extends SqlRepository implements ConversationRuns {
  /** The messages of every run of a conversation, in the order they were recorded. */
  async conversationMessages(
    conversationId: string,
  ): Promise<{ runId: string; message: unknown }[]> {
    const rows = (await this.db().query(
      `SELECT m.run_id, m.message FROM run_messages m JOIN runs r ON r.id = m.run_id
        WHERE r.conversation_id = ? ORDER BY m.id`,
      [conversationId],
    )) as { run_id: string; message: string | Record<string, unknown> }[];
    return rows.map((r) => ({
      runId: r.run_id,
      message: jsonColumn(r.message),
    }));
  }

  /** The team's runs of a conversation, oldest first (empty: no such conversation for the team). */
  async listInConversation(teamId: string, conversationId: string): Promise<Run[]> {
    return this.db()
      .getRepository(Run)
      .find({ where: { conversationId, teamId }, order: { createdAt: 'ASC' } });
  }

  /** A conversation's runs: whose they are, and whether the content retention deleted them. */
  async runsOf(conversationId: string): Promise<ConversationRunMark[]> {
    const rows = (await this.db().query(
      'SELECT id, team_id, content_deleted_at IS NOT NULL AS deleted FROM runs WHERE conversation_id = ?',
      [conversationId],
    )) as { id: string; team_id: string; deleted: number | string }[];
    return rows.map((row) => ({
      id: row.id,
      teamId: row.team_id,
      contentDeleted: Number(row.deleted) === 1,
    }));
  }

  /**
   * Whether the content retention marked any of these runs, read with a lock in `manager`'s
   * transaction: it sees a sweep committed since the transaction's snapshot, and waits for one
   * under way. Through the primary key only (with few runs marked, the optimizer would take the
   * retention's index and hold a lock on its end that every run's end waits for), so only these
   * rows are locked, and runs being inserted into the conversation meanwhile are not waited for.
   */
  async anyContentDeleted(manager: EntityManager, runIds: string[]): Promise<boolean> {
    if (runIds.length === 0) return false;
    const rows = (await manager.query(
      'SELECT content_deleted_at FROM runs FORCE INDEX (PRIMARY) WHERE id IN (?) LOCK IN SHARE MODE',
      [runIds],
    )) as { content_deleted_at: Date | null }[];
    return rows.some((row) => row.content_deleted_at !== null);
  }

  /** A conversation's latest run, of `teamId`'s team when given (null: any team's). */
  async latestInConversation(conversationId: string, teamId: string | null): Promise<Run | null> {
    return this.db()
      .getRepository(Run)
      .findOne({
        where: teamId ? { conversationId, teamId } : { conversationId },
        order: { createdAt: 'DESC', id: 'DESC' },
      });
  }

  /** Whether a run belongs to a conversation. */
  async isInConversation(runId: string, conversationId: string): Promise<boolean> {
    const rows = (await this.db().query(
      'SELECT 1 FROM runs WHERE id = ? AND conversation_id = ? LIMIT 1',
      [runId, conversationId],
    )) as unknown[];
    return rows.length > 0;
  }

  /**
   * The transcripts' rows: the stored messages of the conversation `runId` belongs to (its runs
   * of the run's team), in the order they were stored; empty for an unknown run or none stored.
   */
  async transcriptMessagesOf(runId: string): Promise<TranscriptMessageRow[]> {
    const rows = (await this.db().query(
      `SELECT m.id, m.run_id, m.execution_id, m.created_at, m.message, r.conversation_id
         FROM runs r JOIN runs c ON c.conversation_id = r.conversation_id AND c.team_id = r.team_id
         JOIN run_messages m ON m.run_id = c.id
        WHERE r.id = ? ORDER BY m.id`,
      [runId],
    )) as {
      id: string | number;
      run_id: string;
      execution_id: number;
      created_at: Date;
      message: string | Record<string, unknown>;
      conversation_id: string;
    }[];
    return rows.map((r) => ({
      id: String(r.id),
      runId: r.run_id,
      executionId: r.execution_id,
      createdAt: new Date(r.created_at),
      message: typeof r.message === 'string' ? (JSON.parse(r.message) as unknown) : r.message,
      conversationId: r.conversation_id,
    }));
  }

  /** Whether a run has anything its conversation would show (a message or an execution event). */
  async hasRecords(runId: string): Promise<boolean> {
    const [message, event] = await Promise.all([
      this.db().getRepository(RunMessage).exists({ where: { runId } }),
      this.db()
        .getRepository(RunEvent)
        .exists({ where: { runId, executionId: Not(IsNull()) } }),
    ]);
    return message || event;
  }

  /** The stored messages of these runs, in the order they were stored. */
  messagesOf(runIds: string[]): Promise<RunMessage[]> {
    return this.db()
      .getRepository(RunMessage)
      .find({ where: { runId: In(runIds) }, order: { id: 'ASC' } });
  }

  /** The execution events of these runs (commands' own events left out), in order. */
  executionEventsOf(runIds: string[]): Promise<RunEvent[]> {
    return this.db()
      .getRepository(RunEvent)
      .find({
        where: {
          runId: In(runIds),
          executionId: Not(IsNull()),
          eventType: Not(In(COMMAND_EVENTS)),
        },
        order: { id: 'ASC' },
      });
  }
}

/** A stored chat message of a conversation, with the run and execution that stored it. */
export interface TranscriptMessageRow {
  id: string;
  runId: string;
  executionId: number;
  createdAt: Date;
  /** The stored chat message (JSON). */
  message: unknown;
  conversationId: string;
}
