import type { TokenUsage } from './harness/harness.types';
import type { CatalogModel } from '../models';
import type { RequestUsage } from '../run-config';

const round = (n: number) => Math.round(n * 1e6) / 1e6;

/** What `tokens` cost at the model's catalogue prices (0 for an unknown model). */
export function inferenceCostUsd(tokens: TokenUsage, model: CatalogModel | undefined): number {
  return (
    tokens.promptTokens * (model?.inputCostPerTokenUsd ?? 0) +
    tokens.completionTokens * (model?.outputCostPerTokenUsd ?? 0)
  );
}

/** What a run has cost so far: inference plus compute (what GET /usage sums as cost_usd). */
export function runCostUsd(usage: RequestUsage | null): number {
  return (usage?.inference_cost_usd ?? 0) + (usage?.compute_cost_usd ?? 0);
}

/**
 * Adds one execution's usage to a run's running totals: inference cost from tokens × the
 * model's prices, compute cost from wall time. Credits are reported 1:1 with USD.
 */
export function addUsage(
  previous: RequestUsage | null,
  execution: {
    modelId: string;
    tokens: TokenUsage;
    model: CatalogModel | undefined;
    elapsedMs: number;
    computeCostPerHourUsd: number;
  },
): RequestUsage {
  const { tokens, model } = execution;
  const inference = inferenceCostUsd(tokens, model);
  const compute = (execution.elapsedMs / 3_600_000) * execution.computeCostPerHourUsd;
  const total = tokens.promptTokens + tokens.completionTokens;
  const byModel = [...(previous?.model_token_usage ?? [])];
  const entry = byModel.find((m) => m.model_id === execution.modelId);
  if (entry) {
    entry.total_tokens += total;
    entry.tokens_by_category = {
      input: (entry.tokens_by_category?.input ?? 0) + tokens.promptTokens,
      output: (entry.tokens_by_category?.output ?? 0) + tokens.completionTokens,
    };
  } else if (total > 0) {
    byModel.push({
      model_id: execution.modelId,
      total_tokens: total,
      usage_type: 'custom_endpoint',
      tokens_by_category: { input: tokens.promptTokens, output: tokens.completionTokens },
    });
  }
  const inferenceUsd = round((previous?.inference_cost_usd ?? 0) + inference);
  const computeUsd = round((previous?.compute_cost_usd ?? 0) + compute);
  return {
    inference_cost: inferenceUsd,
    inference_cost_usd: inferenceUsd,
    compute_cost: computeUsd,
    compute_cost_usd: computeUsd,
    total_tokens: (previous?.total_tokens ?? 0) + total,
    model_token_usage: byModel,
  };
}
