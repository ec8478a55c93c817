import { Injectable } from '@nestjs/common';
import { EntityManager, IsNull } from 'typeorm';
import type { JsonObject } from '../../common/json';
import { ApprovalDecider, ApprovalDecision, RunApproval } from './entities/run-approval.entity';
import { selectEntities } from '../../database/entity-select';
import { SqlRepository } from '../../database/sql-repository';

/**
 * The `run_approvals` statements: a run's approval requests, their decisions and the executions
 * that take them (the approvals module and the workers' gate read them through here). `manager`
 * joins a caller's transaction.
 */
@Injectable()
export class RunApprovalRepository extends SqlRepository {
  /** The run's requests, oldest first. */
  list(runId: string): Promise<RunApproval[]> {
    return this.db()
      .getRepository(RunApproval)
      .find({ where: { runId }, order: { requestedAt: 'ASC', id: 'ASC' } });
  }

  find(runId: string, approvalId: string, manager?: EntityManager): Promise<RunApproval | null> {
    return this.db(manager).getRepository(RunApproval).findOneBy({ id: approvalId, runId });
  }

  /** Records a new request (in `manager`'s transaction). */
  async insert(manager: EntityManager, request: RunApproval): Promise<void> {
    await manager
      .getRepository(RunApproval)
      .insert({ ...request, arguments: request.arguments as JsonObject });
  }

  /** Decides the request if nobody did yet; the decided row, or null. */
  async decide(
    manager: EntityManager,
    runId: string,
    approvalId: string,
    decision: { decision: ApprovalDecision; comment: string | null; by: ApprovalDecider },
    at: Date,
  ): Promise<RunApproval | null> {
    const result = await manager.getRepository(RunApproval).update(
      { id: approvalId, runId, decision: IsNull() },
      {
        decision: decision.decision,
        comment: decision.comment,
        decidedBy: decision.by,
        decidedAt: at,
      },
    );
    if (!result.affected) return null;
    return manager.getRepository(RunApproval).findOneByOrFail({ id: approvalId });
  }

  /** Locks the run's undecided requests (FOR UPDATE), oldest first. */
  lockUndecided(manager: EntityManager, runId: string): Promise<RunApproval[]> {
    return manager
      .getRepository(RunApproval)
      .createQueryBuilder('a')
      .setLock('pessimistic_write')
      .where('a.run_id = :runId AND a.decision IS NULL', { runId })
      .orderBy('a.requested_at', 'ASC')
      .addOrderBy('a.id', 'ASC')
      .getMany();
  }

  /** Whether the run has a request nobody decided yet (locking it, in `manager`'s transaction). */
  async hasUndecided(manager: EntityManager, runId: string): Promise<boolean> {
    const rows = (await manager.query(
      `SELECT 1 FROM run_approvals WHERE run_id = ? AND decision IS NULL LIMIT 1 FOR UPDATE`,
      [runId],
    )) as unknown[];
    return rows.length > 0;
  }

  /** Requests of the run no execution has taken yet, oldest first. */
  untaken(runId: string): Promise<RunApproval[]> {
    return selectEntities(this.dataSource, RunApproval, {
      where: 'run_id = ? AND taken_by_execution IS NULL',
      params: [runId],
      orderBy: 'requested_at, id',
    });
  }

  /** Marks a decided request nobody took as taken by this execution; true once. */
  async take(
    manager: EntityManager,
    runId: string,
    id: string,
    executionId: number,
  ): Promise<boolean> {
    const result = await manager
      .createQueryBuilder()
      .update(RunApproval)
      .set({ takenByExecution: executionId })
      .where('id = :id AND run_id = :runId', { id, runId })
      .andWhere('taken_by_execution IS NULL AND decision IS NOT NULL')
      .execute();
    return result.affected === 1;
  }

  /** The tool call and decision of each request no execution took yet. */
  awaiting(runId: string): Promise<Pick<RunApproval, 'toolCallId' | 'decision'>[]> {
    return this.untaken(runId);
  }

  /** The decision and arguments of each of the run's egress requests. */
  egressRequests(runId: string): Promise<Pick<RunApproval, 'decision' | 'arguments'>[]> {
    return selectEntities(this.dataSource, RunApproval, {
      where: "run_id = ? AND tool = 'egress'",
      params: [runId],
    });
  }

  /**
   * The team's requests, newest first by (requested_at, id), after `after` when given: undecided
   * ones (`pending`), decided ones, or all; at most `limit`.
   */
  teamRequests(
    teamId: string,
    state: 'pending' | 'decided' | 'all',
    after: { at: Date; id: string } | undefined,
    limit: number,
  ): Promise<RunApproval[]> {
    let query = this.db()
      .getRepository(RunApproval)
      .createQueryBuilder('a')
      .where('a.team_id = :teamId', { teamId });
    if (state === 'pending') query = query.andWhere('a.decision IS NULL');
    if (state === 'decided') query = query.andWhere('a.decision IS NOT NULL');
    if (after) {
      query = query.andWhere(
        '(a.requested_at < :at OR (a.requested_at = :at AND a.id < :id))',
        after,
      );
    }
    return query
      .orderBy('a.requested_at', 'DESC')
      .addOrderBy('a.id', 'DESC')
      .limit(limit)
      .getMany();
  }
}
