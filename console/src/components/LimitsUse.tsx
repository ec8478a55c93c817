import type { Schemas } from '../api/client';
import { formatUsd, percentOf } from '../format/money';

type Use = Schemas['UsageAgainstLimits'];

const INFERENCE_ONLY =
  'The budget counts inference at the model catalogue’s prices, not compute time, for runs created this month.';

/** A bar filled to `percent` (over 100 % it is full and red), with its figures as text beside. */
function Gauge({ percent, label }: { percent: number; label: string }) {
  return (
    <div
      className={`gauge${percent >= 100 ? ' full' : percent >= 80 ? ' high' : ''}`}
      role="img"
      aria-label={label}
    >
      <span style={{ width: `${Math.min(percent, 100)}%` }} />
    </div>
  );
}

function Budget({ use }: { use: Use }) {
  const spent = formatUsd(use.spent_this_month_usd);
  const month = new Date(use.month_start).toLocaleDateString('en-US', {
    month: 'long',
    timeZone: 'UTC',
  });
  if (use.monthly_budget_usd === null) {
    return (
      <div className="use" data-testid="budget-use">
        <h3>Budget in {month}</h3>
        <p className="figure">{spent} spent</p>
        <p className="hint">
          No monthly budget is set: runs are not stopped for cost. {INFERENCE_ONLY}
        </p>
      </div>
    );
  }
  const percent = percentOf(use.spent_this_month_usd, use.monthly_budget_usd);
  const budget = formatUsd(use.monthly_budget_usd);
  return (
    <div className="use" data-testid="budget-use">
      <h3>Budget in {month}</h3>
      <p className="figure">
        {spent} <span className="muted">of {budget} spent</span>
      </p>
      <Gauge percent={percent} label={`${percent} % of the monthly budget spent`} />
      <p className="hint">
        {percent >= 100
          ? 'Spent: new runs fail (budget exceeded) until the month ends or an admin raises it.'
          : `${percent === 0 && use.spent_this_month_usd > 0 ? 'Under 1' : percent} % spent, ${formatUsd(use.monthly_budget_usd - use.spent_this_month_usd)} left.`}{' '}
        {INFERENCE_ONLY}
      </p>
    </div>
  );
}

function Concurrency({ use }: { use: Use }) {
  const waiting = use.waiting_runs > 0 ? `${use.waiting_runs} waiting for a slot.` : '';
  if (use.max_concurrent_runs === null) {
    return (
      <div className="use" data-testid="concurrency-use">
        <h3>Runs at once</h3>
        <p className="figure">{use.running_runs} running</p>
        <p className="hint">No limit on runs at once. {waiting}</p>
      </div>
    );
  }
  const percent = percentOf(use.running_runs, use.max_concurrent_runs);
  return (
    <div className="use" data-testid="concurrency-use">
      <h3>Runs at once</h3>
      <p className="figure">
        {use.running_runs} <span className="muted">of {use.max_concurrent_runs} running</span>
      </p>
      <Gauge percent={percent} label={`${percent} % of the run slots in use`} />
      <p className="hint">
        {waiting || 'No run is waiting.'} Runs beyond the limit wait, queued, and start in order.
      </p>
    </div>
  );
}

/** This month's spend against the budget and the runs now against the concurrency limit. */
export function LimitsUse({ use }: { use: Use }) {
  return (
    <div className="uses" aria-label="Use of the limits" role="group">
      <Budget use={use} />
      <Concurrency use={use} />
    </div>
  );
}
