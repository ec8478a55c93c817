import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { LimitsService } from '../limits/limits.service';
import { ModelsService } from '../models/models.service';
import type { Run } from '../runs/entities/run.entity';
import { budgetRefusal, limitsBudget, monthStartUtc } from './budget-limits';
import type { TokenUsage } from './harness/harness.types';
import { inferenceCostUsd } from './run-usage';

const COST = `COALESCE(JSON_EXTRACT(request_usage, '$.inference_cost_usd') + 0, 0)`;

/**
 * `monthly_budget_usd` and `max_run_cost_usd`, checked before an execution starts and before
 * each of its model calls. Spend is read from MySQL (what the runs' ended executions stored, on
 * any replica) plus this execution's own tokens so far.
 */
@Injectable()
export class RunBudget {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly limits: LimitsService,
    private readonly models: ModelsService,
  ) {}

  /** Why the run may not call its model now (`tokens`: this execution's so far), or null. */
  async refusal(
    run: Pick<Run, 'id' | 'teamId' | 'executorId' | 'modelId'>,
    tokens: TokenUsage,
  ): Promise<string | null> {
    const limits = await this.limits.forRun(
      this.dataSource.manager,
      run.teamId,
      run.executorId,
      false,
    );
    if (!limitsBudget(limits)) return null;
    const current = inferenceCostUsd(tokens, this.models.find(run.modelId ?? ''));
    const [own] = (await this.dataSource.query(`SELECT ${COST} AS cost FROM runs WHERE id = ?`, [
      run.id,
    ])) as { cost: string | number }[];
    const [others] = (await this.dataSource.query(
      `SELECT COALESCE(SUM(${COST}), 0) AS team,
              COALESCE(SUM(CASE WHEN executor_id <=> ? THEN ${COST} ELSE 0 END), 0) AS agent
         FROM runs WHERE team_id = ? AND created_at >= ? AND id <> ?`,
      [run.executorId, run.teamId, monthStartUtc(new Date()), run.id],
    )) as { team: string | number; agent: string | number }[];
    const spentByRun = Number(own?.cost ?? 0) + current;
    return budgetRefusal(limits, {
      run: spentByRun,
      team: Number(others.team) + spentByRun,
      agent: run.executorId ? Number(others.agent) + spentByRun : 0,
    });
  }
}
