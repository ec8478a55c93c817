import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { AmbientMetrics } from '../metrics';
import { ModelsService } from '../models';
import type { Run } from '../runs';
import type { RequestUsage } from '../run-config';
import type { TokenUsage } from './harness/harness.types';
import { addUsage, inferenceCostUsd, runCostUsd } from './run-usage';

/** What an execution cost: added to the run's `request_usage` and counted in the metrics. */
@Injectable()
export class ExecutionUsage {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly models: ModelsService,
    private readonly metrics: AmbientMetrics,
  ) {}

  /**
   * The run's usage with this execution's added (to be stored with the execution's end). The
   * usage before is the run's as claimed: only its executions' ends (fenced) write it, and none
   * but this one can while it holds the run. `elapsedMs` null: the execution ran on the team's
   * own machine (a self-hosted worker), whose compute is not charged; its inference is.
   */
  add(run: Run, tokens: TokenUsage, elapsedMs: number | null): RequestUsage {
    const model = this.models.find(run.modelId ?? '');
    const modelId = run.modelId ?? 'unknown';
    const previous = run.requestUsage;
    const usage = addUsage(previous, {
      modelId,
      tokens,
      model,
      elapsedMs: elapsedMs ?? 0,
      computeCostPerHourUsd: elapsedMs === null ? 0 : this.config.runs.computeCostPerHourUsd,
    });
    const cost = inferenceCostUsd(tokens, model);
    this.metrics.modelUsage(modelId, tokens.promptTokens, tokens.completionTokens, cost);
    this.metrics.teamRunCost(
      run.teamId,
      model?.id ?? null,
      runCostUsd(usage) - runCostUsd(previous),
    );
    return usage;
  }
}
