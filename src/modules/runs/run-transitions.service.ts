import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { newUuid } from '../../common/ids';
import type { JsonObject } from '../../common/json';
import { Run } from './entities/run.entity';
import { RunEvent } from './entities/run-event.entity';
import { EVENT_FOR_STATE, RunState, statesLeadingTo } from './run-state';

type ColumnValue = unknown | (() => string);

export interface TransitionOptions {
  /** Narrows the states the run may be in; always intersected with the state machine's table. */
  from?: readonly RunState[];
  /** Other columns to write in the same UPDATE (entity property names). */
  set?: Partial<Record<keyof Run, ColumnValue>>;
  /** An extra guard, e.g. `lease_owner = :owner`. */
  where?: { sql: string; params: Record<string, unknown> };
  /** Timeline event payload; `false` records no event. */
  event?: { payload?: Record<string, unknown>; executionId?: number | null } | false;
}

/**
 * The one way a run changes state: a guarded UPDATE (`WHERE state IN (allowed)`) and its
 * timeline event in one transaction. Returns false when the guard did not match, i.e. someone
 * else moved the run first; callers decide what that means for them.
 */
@Injectable()
export class RunTransitions {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async transition(runId: string, to: RunState, options: TransitionOptions = {}): Promise<boolean> {
    const allowed = statesLeadingTo(to).filter((s) => !options.from || options.from.includes(s));
    if (allowed.length === 0) return false;
    return this.dataSource.transaction(async (manager) => {
      const now = new Date();
      let query = manager
        .createQueryBuilder()
        .update(Run)
        .set({ ...(options.set ?? {}), state: to, updatedAt: now } as never)
        .where('id = :runId', { runId })
        .andWhere('state IN (:...allowed)', { allowed });
      if (options.where) query = query.andWhere(options.where.sql, options.where.params);
      const result = await query.execute();
      if (!result.affected) return false;
      const eventType = EVENT_FOR_STATE[to];
      if (eventType && options.event !== false) {
        await this.appendEvent(manager, runId, eventType, {
          occurredAt: now,
          executionId: options.event?.executionId ?? null,
          payload: options.event?.payload ?? null,
        });
      }
      return true;
    });
  }

  async appendEvent(
    manager: EntityManager,
    runId: string,
    eventType: string,
    fields: {
      occurredAt?: Date;
      executionId?: number | null;
      payload?: JsonObject | null;
    } = {},
  ): Promise<void> {
    await manager.getRepository(RunEvent).insert({
      eventUuid: newUuid(),
      runId,
      executionId: fields.executionId ?? null,
      eventType,
      occurredAt: fields.occurredAt ?? new Date(),
      payload: fields.payload ?? null,
    });
  }
}
