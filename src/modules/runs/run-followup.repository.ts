import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { Run } from './entities/run.entity';
import { FollowupOutcome, RunFollowup } from './entities/run-followup.entity';

/**
 * A run's follow-ups (`run_followups`): storing them under the run row's lock, taking the
 * undelivered ones for an execution, dropping them on a cancel. `manager` joins a caller's
 * transaction.
 */
@Injectable()
export class RunFollowupRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Locks the run's row for a follow-up (a cancel waits for it); its id and state. */
  lockRun(
    manager: EntityManager,
    runId: string,
  ): Promise<Pick<Run, 'id' | 'state' | 'contentDeletedAt'>> {
    return manager
      .getRepository(Run)
      .createQueryBuilder('r')
      .setLock('pessimistic_write')
      .select(['r.id', 'r.state', 'r.contentDeletedAt'])
      .where('r.id = :id', { id: runId })
      .getOneOrFail();
  }

  async insert(manager: EntityManager, followup: RunFollowup): Promise<void> {
    await manager.getRepository(RunFollowup).insert(followup);
  }

  async setOutcome(followupId: string, outcome: FollowupOutcome): Promise<void> {
    await this.dataSource.getRepository(RunFollowup).update({ id: followupId }, { outcome });
  }

  async hasUndelivered(runId: string): Promise<boolean> {
    const rows = (await this.dataSource.query(
      `SELECT 1 FROM run_followups
        WHERE run_id = ? AND consumed_at IS NULL AND dropped_at IS NULL LIMIT 1`,
      [runId],
    )) as unknown[];
    return rows.length > 0;
  }

  /** Marks the run's undelivered follow-ups taken by the execution; their messages, oldest first. */
  async takeUndelivered(
    manager: EntityManager,
    runId: string,
    executionId: number,
  ): Promise<string[]> {
    const pending = await manager
      .getRepository(RunFollowup)
      .createQueryBuilder('f')
      .setLock('pessimistic_write')
      .where('f.run_id = :runId AND f.consumed_at IS NULL AND f.dropped_at IS NULL', {
        runId,
      })
      .orderBy('f.created_at', 'ASC')
      .addOrderBy('f.id', 'ASC')
      .getMany();
    if (pending.length === 0) return [];
    await manager
      .getRepository(RunFollowup)
      .createQueryBuilder()
      .update()
      .set({ consumedAt: new Date(), executionId })
      .whereInIds(pending.map((f) => f.id))
      .execute();
    return pending.map((f) => f.message);
  }

  /** Marks the run's undelivered follow-ups dropped at `now`; their ids. */
  async dropUndelivered(manager: EntityManager, runId: string, now: Date): Promise<string[]> {
    const pending = await manager
      .getRepository(RunFollowup)
      .createQueryBuilder('f')
      .setLock('pessimistic_write')
      .select(['f.id'])
      .where('f.run_id = :runId AND f.consumed_at IS NULL AND f.dropped_at IS NULL', { runId })
      .getMany();
    if (pending.length === 0) return [];
    const ids = pending.map((f) => f.id);
    await manager
      .getRepository(RunFollowup)
      .createQueryBuilder()
      .update()
      .set({ droppedAt: now })
      .whereInIds(ids)
      .execute();
    return ids;
  }
}
