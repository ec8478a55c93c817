import { Injectable } from '@nestjs/common';
import { EntityManager, In } from 'typeorm';
import { Run } from './entities/run.entity';
import { SqlRepository } from '../../database/sql-repository';

/** A guard on a run row's columns (e.g. an execution's fencing token), as SQL and parameters. */
export interface RowCondition {
  sql: string;
  params: unknown[];
}

/**
 * Executions' leases and fencing on the `runs` table (lease_owner, lease_expires_at,
 * execution_count), and the runs whose lease or offer lapsed, for the sweepers.
 */
@Injectable()
export class RunLeaseRepository extends SqlRepository {
  /** Whether the run's row matches `condition`; `lock` takes a share lock until the commit. */
  async matches(
    manager: EntityManager,
    runId: string,
    condition: RowCondition,
    lock: boolean,
  ): Promise<boolean> {
    const rows = (await manager.query(
      `SELECT 1 FROM runs WHERE id = ? AND ${condition.sql}${lock ? ' LOCK IN SHARE MODE' : ''}`,
      [runId, ...condition.params],
    )) as unknown[];
    return rows.length > 0;
  }

  /**
   * Extends the lease of the execution holding it (`leaseOwner`; `executionId` too when given)
   * while the run is claimed or in progress. False when the lease is no longer held.
   */
  async renewLease(
    runId: string,
    leaseOwner: string,
    until: Date,
    executionId?: number,
  ): Promise<boolean> {
    const byExecution = executionId === undefined ? '' : ' AND execution_count = ?';
    const result = (await this.db().query(
      `UPDATE runs SET lease_expires_at = ? WHERE id = ? AND lease_owner = ?${byExecution}
          AND FIELD(state, 'CLAIMED', 'INPROGRESS') > 0`,
      [until, runId, leaseOwner, ...(executionId === undefined ? [] : [executionId])],
    )) as { affectedRows?: number };
    return (result.affectedRows ?? 0) > 0;
  }

  /** Whether this lease holds the run, claimed or in progress. */
  async leaseHolds(runId: string, leaseOwner: string): Promise<boolean> {
    const run = await this.db()
      .getRepository(Run)
      .findOne({ select: { state: true, leaseOwner: true }, where: { id: runId } });
    return run?.leaseOwner === leaseOwner && ['CLAIMED', 'INPROGRESS'].includes(run.state);
  }

  /** The lease columns of each of these runs that exists (which execution holds it, its end). */
  leasesOf(
    runIds: string[],
  ): Promise<Pick<Run, 'id' | 'state' | 'leaseOwner' | 'finishedAt' | 'executionCount'>[]> {
    return this.db()
      .getRepository(Run)
      .find({
        select: { id: true, state: true, leaseOwner: true, finishedAt: true, executionCount: true },
        where: { id: In(runIds) },
      });
  }

  /** QUEUED runs for Ambient's workers whose job went missing (not updated since `before`). */
  async queuedWithoutWorkerHost(before: Date, limit: number): Promise<string[]> {
    const rows = await this.db()
      .getRepository(Run)
      .createQueryBuilder('r')
      .select('r.id', 'id')
      .where('r.state = :state AND r.updated_at < :before', { state: 'QUEUED', before })
      .andWhere('r.worker_host IS NULL') // self-hosted runs wait in MySQL for their workers
      .andWhere('r.at_capacity = 0') // waiting for a concurrency slot: RunCapacity dispatches
      .orderBy('r.updated_at', 'ASC')
      .limit(limit)
      .getRawMany<{ id: string }>();
    return rows.map((row) => row.id);
  }

  /** Claimed or running runs whose lease lapsed before `now`. */
  lapsedLeases(now: Date, limit: number): Promise<Run[]> {
    return this.db()
      .getRepository(Run)
      .createQueryBuilder('r')
      .select(['r.id', 'r.teamId', 'r.workerHost', 'r.attempt', 'r.executionCount', 'r.leaseOwner'])
      .where('r.state IN (:...states) AND r.lease_expires_at < :now', {
        states: ['CLAIMED', 'INPROGRESS'],
        now,
      })
      .limit(limit)
      .getMany();
  }

  /** The team's runs waiting for this self-hosted worker host, oldest first. */
  queuedForWorkerHost(teamId: string, workerHost: string, limit: number): Promise<Run[]> {
    return this.db()
      .getRepository(Run)
      .find({
        where: { teamId, workerHost, state: 'QUEUED' },
        order: { createdAt: 'ASC', id: 'ASC' },
        take: limit,
      });
  }

  /** Self-hosted offers (PENDING) whose worker did not answer before `now`. */
  lapsedOffers(now: Date, limit: number): Promise<Run[]> {
    return this.db()
      .getRepository(Run)
      .createQueryBuilder('r')
      .select(['r.id', 'r.teamId', 'r.workerHost', 'r.leaseOwner'])
      .where("r.state = 'PENDING' AND r.worker_host IS NOT NULL AND r.lease_expires_at < :now", {
        now,
      })
      .limit(limit)
      .getMany();
  }

  /** Self-hosted runs queued (or unclaimed) since before `before`. */
  unclaimedSince(before: Date, limit: number): Promise<Run[]> {
    return this.db()
      .getRepository(Run)
      .createQueryBuilder('r')
      .select(['r.id', 'r.workerHost'])
      .where("r.state = 'QUEUED' AND r.worker_host IS NOT NULL")
      .andWhere('COALESCE(r.unclaimed_since, r.updated_at) < :before', { before })
      .limit(limit)
      .getMany();
  }
}
