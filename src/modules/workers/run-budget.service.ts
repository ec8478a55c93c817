import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { LimitsService } from '../limits';
import { ModelsService } from '../models';
import type { Run } from '../runs';
import { RunUsageRepository } from '../runs';
import { budgetRefusal, limitsBudget, monthStartUtc } from './budget-limits';
import type { TokenUsage } from './harness/harness.types';
import { inferenceCostUsd } from './run-usage';

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
    private readonly records: RunUsageRepository,
  ) {}

  /** Why the run may not call its model now (`tokens`: this execution's so far), or null. */
  async refusal(
    run: Pick<Run, 'id' | 'teamId' | 'executorId' | 'modelId' | 'maxCostUsd'>,
    tokens: TokenUsage,
  ): Promise<string | null> {
    const limits = await this.limits.forRun(
      this.dataSource.manager,
      run.teamId,
      run.executorId,
      false,
    );
    const runCap = run.maxCostUsd ?? null;
    if (!limitsBudget(limits, runCap)) return null;
    const current = inferenceCostUsd(tokens, this.models.find(run.modelId ?? ''));
    const stored = (await this.records.requestUsageOf(run.id))?.inference_cost_usd ?? 0;
    const others = await this.records.inferenceSpendSince(
      run.teamId,
      run.executorId,
      monthStartUtc(new Date()),
      run.id,
    );
    const spentByRun = stored + current;
    return budgetRefusal(
      limits,
      {
        run: spentByRun,
        team: others.team + spentByRun,
        agent: run.executorId ? others.executor + spentByRun : 0,
      },
      runCap,
    );
  }
}
