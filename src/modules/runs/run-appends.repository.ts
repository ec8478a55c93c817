import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { newUuid } from '../../common/ids';
import type { JsonObject } from '../../common/json';
import { RunChanges } from './live/run-changes.service';
import type { RowCondition } from './run-lease.repository';

/** A timeline event an execution adds. */
export interface AppendedEvent {
  eventType: string;
  payload?: JsonObject | null;
  occurredAt?: Date;
}

/**
 * Rows an execution adds to its run's conversation (`run_messages`) and timeline (`run_events`),
 * each batch in one guarded statement: `INSERT … SELECT … FROM runs WHERE id = ? AND <guard>
 * LOCK IN SHARE MODE`. The statement share-locks the run row while it checks the guard (an
 * execution's fencing token) and inserts every row or none, so it is the fenced transaction
 * (lock, check, insert, commit) in one round trip: a takeover, which needs the row exclusively,
 * either commits before it (the guard fails, nothing is inserted) or waits for it. Rows keep
 * their order (their ids grow in the order given). The change hint is published after the
 * statement (autocommit: the rows are visible then).
 */
@Injectable()
export class RunAppends {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly changes: RunChanges,
  ) {}

  /** Adds the messages; false (nothing added) when the run does not match `guard`. */
  messages(
    runId: string,
    executionId: number,
    guard: RowCondition,
    messages: JsonObject[],
  ): Promise<boolean> {
    const now = new Date();
    return this.insertIfHeld(
      'run_messages',
      ['run_id', 'execution_id', 'message', 'created_at'],
      messages.map((message) => [runId, executionId, JSON.stringify(message), now]),
      runId,
      guard,
      'message',
    );
  }

  /** Adds the events; false (nothing added) when the run does not match `guard`. */
  events(
    runId: string,
    executionId: number,
    guard: RowCondition,
    events: AppendedEvent[],
  ): Promise<boolean> {
    const now = new Date();
    return this.insertIfHeld(
      'run_events',
      ['event_uuid', 'run_id', 'execution_id', 'event_type', 'occurred_at', 'payload'],
      events.map((event) => [
        newUuid(),
        runId,
        executionId,
        event.eventType,
        event.occurredAt ?? now,
        event.payload == null ? null : JSON.stringify(event.payload),
      ]),
      runId,
      guard,
      'timeline',
    );
  }

  private async insertIfHeld(
    table: 'run_messages' | 'run_events',
    columns: string[],
    rows: unknown[][],
    runId: string,
    guard: RowCondition,
    kind: 'message' | 'timeline',
  ): Promise<boolean> {
    if (rows.length === 0) return true;
    // The rows as a derived table (`seq` orders the inserts); the guard's columns are the run's.
    const names = columns.map((_, i) => `v.c${i}`).join(', ');
    const first = `SELECT ${columns.map((_, i) => `? AS c${i}`).join(', ')}, 0 AS seq`;
    const others = rows
      .slice(1)
      .map((_, i) => ` UNION ALL SELECT ${columns.map(() => '?').join(', ')}, ${i + 1}`);
    const result = (await this.dataSource.query(
      `INSERT INTO ${table} (${columns.join(', ')})
       SELECT ${names} FROM (${first}${others.join('')}) v, runs
        WHERE runs.id = ? AND ${guard.sql}
        ORDER BY v.seq LOCK IN SHARE MODE`,
      [...rows.flat(), runId, ...guard.params],
    )) as { affectedRows?: number };
    if ((result.affectedRows ?? 0) === 0) return false;
    this.changes.rowsAdded(runId, kind);
    return true;
  }
}
