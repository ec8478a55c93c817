import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, LessThan } from 'typeorm';
import { FiringStatus, ScheduleFiring } from './schedule-firing.entity';

/** The `schedule_firings` rows: a schedule's ticks claimed, spawned or left pending. */
@Injectable()
export class ScheduleFiringRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async insert(manager: EntityManager, firing: ScheduleFiring): Promise<void> {
    await manager.getRepository(ScheduleFiring).insert(firing);
  }

  find(manager: EntityManager, id: string): Promise<ScheduleFiring | null> {
    return manager.getRepository(ScheduleFiring).findOneBy({ id });
  }

  /** Locks the firing (FOR UPDATE); null for no such firing. */
  lock(manager: EntityManager, id: string): Promise<ScheduleFiring | null> {
    return manager
      .getRepository(ScheduleFiring)
      .createQueryBuilder('f')
      .setLock('pessimistic_write')
      .where('f.id = :id', { id })
      .getOne();
  }

  async finish(
    manager: EntityManager,
    id: string,
    status: FiringStatus,
    note: string | null,
    finishedAt: Date,
  ): Promise<void> {
    await manager.getRepository(ScheduleFiring).update({ id }, { status, note, finishedAt });
  }

  /** Firings pending since before `before`, oldest first (at most `limit`). */
  pendingSince(before: Date, limit: number): Promise<Pick<ScheduleFiring, 'id'>[]> {
    return this.dataSource.getRepository(ScheduleFiring).find({
      select: { id: true },
      where: { status: 'pending', claimedAt: LessThan(before) },
      order: { claimedAt: 'ASC' },
      take: limit,
    });
  }
}
