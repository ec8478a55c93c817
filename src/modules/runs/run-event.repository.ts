import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { newUuid } from '../../common/ids';
import type { JsonObject } from '../../common/json';
import { jsonColumn } from '../../database/json-column';
import { RunEvent } from './entities/run-event.entity';

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

  /** Adds an event to the run's timeline in `manager`'s transaction (RunTransitions.appendEvent). */
  async append(
    manager: EntityManager,
    runId: string,
    eventType: string,
    fields: { occurredAt?: Date; executionId?: number | null; payload?: JsonObject | null },
  ): Promise<void> {
    await manager.query(
      `INSERT INTO run_events (event_uuid, run_id, execution_id, event_type, occurred_at, payload)
       VALUES (?, ?, ?, ?, ?, ?)`,
      [
        newUuid(),
        runId,
        fields.executionId ?? null,
        eventType,
        fields.occurredAt ?? new Date(),
        fields.payload == null ? null : JSON.stringify(fields.payload),
      ],
    );
  }

  /** Adds an event in `manager`'s transaction. */
  async insert(manager: EntityManager, event: Partial<RunEvent>): Promise<void> {
    await manager.getRepository(RunEvent).insert(event);
  }
}
