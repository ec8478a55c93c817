import type { components } from './schema';

// Types from the generated schema, not from client.ts: this file is also compiled for the unit
// specs, which have no DOM.
type Schemas = components['schemas'];
export type UsageBucket = Schemas['UsageBucket'];

const DAY_MS = 86_400_000;

/** What a run has cost: inference plus compute, as GET /usage sums it. */
export function runCostUsd(usage: Schemas['RunItem']['request_usage']): number | undefined {
  if (!usage) return undefined;
  return (usage.inference_cost_usd ?? 0) + (usage.compute_cost_usd ?? 0);
}

// Money has one format in the console (format/money.ts); kept importable from here for its callers.
export { formatUsd } from '../format/money';

/** `YYYY-MM-DD` of a UTC day. */
export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/** The first day of `at`'s UTC month. */
export function monthStart(at: Date): string {
  return `${utcDay(at).slice(0, 8)}01`;
}

/** The query of a range of whole UTC days, `from` through `to` (both YYYY-MM-DD, inclusive). */
export function dayRangeQuery(from: string, to: string): { from: string; to: string } {
  const end = new Date(Date.parse(`${to}T00:00:00Z`) + DAY_MS);
  return { from: `${from}T00:00:00.000Z`, to: end.toISOString() };
}

/** Every UTC day from `from` to the last day before `to` (ISO instants), with its cost (0 without runs). */
export function costPerDay(
  from: string,
  to: string,
  buckets: UsageBucket[],
): { day: string; cost: number }[] {
  const costs = new Map(buckets.map((b) => [b.key, b.cost_usd]));
  const days: { day: string; cost: number }[] = [];
  const end = Date.parse(to);
  for (let at = Date.parse(`${from.slice(0, 10)}T00:00:00Z`); at < end; at += DAY_MS) {
    const day = utcDay(new Date(at));
    days.push({ day, cost: costs.get(day) ?? 0 });
  }
  return days;
}

/** The sums of a set of buckets (each run is in exactly one bucket of a grouping). */
export function totals(buckets: UsageBucket[]) {
  return buckets.reduce(
    (sum, b) => ({
      runs: sum.runs + b.runs,
      promptTokens: sum.promptTokens + b.prompt_tokens,
      completionTokens: sum.completionTokens + b.completion_tokens,
      costUsd: sum.costUsd + b.cost_usd,
    }),
    { runs: 0, promptTokens: 0, completionTokens: 0, costUsd: 0 },
  );
}
