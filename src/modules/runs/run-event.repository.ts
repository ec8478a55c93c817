import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { newUuid } from '../../common/ids';
import type { JsonObject } from '../../common/json';
import { jsonColumn } from '../../database/json-column';
import { RunEvent } from './entities/run-event.entity';

/** One event of a run's timeline, as RunTransitions adds it. */
export interface TimelineEvent {
  eventType: string;
  occurredAt?: Date;
  executionId?: number | null;
  payload?: JsonObject | null;
}

/**
 * `run_events` rows read or added outside the appends of an execution (RunAppends): a run's
 * timeline, the workers' finish request and workspace release. `manager` joins a caller's
 * transaction.
 */
@Injectable()
export class RunEventRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The run's timeline, oldest first. */
  timeline(runId: string): Promise<RunEvent[]> {
    return this.dataSource.getRepository(RunEvent).find({ where: { runId }, order: { id: 'ASC' } });
  }

  /** The payload of the execution's latest event of this type, null when there is none. */
  async latestPayload(
    runId: string,
    executionId: number,
    eventType: string,
  ): Promise<Record<string, unknown> | null> {
    const [row] = (await this.dataSource.query(
      `SELECT payload FROM run_events WHERE run_id = ? AND execution_id = ? AND event_type = ?
        ORDER BY id DESC LIMIT 1`,
      [runId, executionId, eventType],
    )) as { payload: string | Record<string, unknown> | null }[];
    return jsonColumn(row?.payload);
  }

  /**
   * Adds events to the run's timeline in `manager`'s transaction, in one INSERT (RunTransitions):
   * their ids ascend in the order given, the timeline's order.
   */
  async append(manager: EntityManager, runId: string, events: TimelineEvent[]): Promise<void> {
    if (events.length === 0) return;
    await manager.query(
      `INSERT INTO run_events (event_uuid, run_id, execution_id, event_type, occurred_at, payload)
       VALUES ${events.map(() => '(?, ?, ?, ?, ?, ?)').join(', ')}`,
      events.flatMap((event) => [
        newUuid(),
        runId,
        event.executionId ?? null,
        event.eventType,
        event.occurredAt ?? new Date(),
        event.payload == null ? null : JSON.stringify(event.payload),
      ]),
    );
  }

  /** Adds an event in `manager`'s transaction. */
  async insert(manager: EntityManager, event: Partial<RunEvent>): Promise<void> {
    await manager.getRepository(RunEvent).insert(event);
  }
}
