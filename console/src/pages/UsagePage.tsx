import { useState, type FormEvent } from 'react';
import { api, data } from '../api/client';
import {
  costPerDay,
  dayRangeQuery,
  formatUsd,
  monthStart,
  totals,
  utcDay,
  type UsageBucket,
} from '../api/usage';
import { CostChart } from '../components/CostChart';
import { LimitsPanel } from '../components/LimitsPanel';
import { ErrorMessage, useLoad } from '../components/ui';

type Grouping = 'day' | 'model' | 'source' | 'identity' | 'creator';
const BREAKDOWNS: [Grouping, string, string][] = [
  ['model', 'By model', 'Model'],
  ['source', 'By source', 'Source'],
  ['identity', 'By identity', 'Identity (executes as)'],
  ['creator', 'By creator', 'Creator'],
];

interface Range {
  from: string;
  to: string;
}

function loadUsage(range: Range, groupBy: Grouping) {
  return data(
    api.GET('/usage', {
      params: { query: { ...dayRangeQuery(range.from, range.to), group_by: groupBy } },
    }),
  );
}

/** A user's or agent's name over its uid; other keys as they are; `none` for runs without one. */
function BucketKey({ bucket }: { bucket: UsageBucket }) {
  if (bucket.key === null) return <span className="muted">none</span>;
  if (!bucket.name) return <code>{bucket.key}</code>;
  return (
    <>
      {bucket.name}
      <br />
      <code className="muted">{bucket.key}</code>
    </>
  );
}

function BreakdownTable({
  title,
  keyHeading,
  buckets,
}: {
  title: string;
  keyHeading: string;
  buckets: UsageBucket[];
}) {
  if (buckets.length === 0) return <p className="muted">No runs.</p>;
  return (
    <div className="table-wrap">
      <table aria-label={title}>
        <thead>
          <tr>
            <th scope="col">{keyHeading}</th>
            <th scope="col">Runs</th>
            <th scope="col">Prompt tokens</th>
            <th scope="col">Completion tokens</th>
            <th scope="col">Cost</th>
          </tr>
        </thead>
        <tbody>
          {buckets.map((b) => (
            <tr key={b.key ?? ''}>
              <td>
                <BucketKey bucket={b} />
              </td>
              <td>{b.runs}</td>
              <td>{b.prompt_tokens}</td>
              <td>{b.completion_tokens}</td>
              <td>{formatUsd(b.cost_usd)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** What the team's runs used and cost over a range of UTC days: per day, and broken down. */
export function UsagePage() {
  const initial: Range = { from: monthStart(new Date()), to: utcDay(new Date()) };
  const [draft, setDraft] = useState<Range>(initial);
  const [range, setRange] = useState<Range>(initial);

  const usage = useLoad(async () => {
    const [days, ...breakdowns] = await Promise.all([
      loadUsage(range, 'day'),
      ...BREAKDOWNS.map(([groupBy]) => loadUsage(range, groupBy)),
    ]);
    return { days, breakdowns };
  }, [range]);

  function apply(event: FormEvent) {
    event.preventDefault();
    setRange(draft);
  }

  const sums = usage.value && totals(usage.value.days.buckets);
  return (
    <section>
      <h1>Usage</h1>
      <LimitsPanel />
      <form className="filters" onSubmit={apply} aria-label="Usage range">
        <div>
          <label htmlFor="usage-from">From (UTC day)</label>
          <input
            id="usage-from"
            type="date"
            required
            value={draft.from}
            onChange={(event) => setDraft({ ...draft, from: event.target.value })}
          />
        </div>
        <div>
          <label htmlFor="usage-to">To (UTC day, included)</label>
          <input
            id="usage-to"
            type="date"
            required
            value={draft.to}
            onChange={(event) => setDraft({ ...draft, to: event.target.value })}
          />
        </div>
        <div className="filter-actions">
          <button type="submit">Show</button>
        </div>
      </form>
      <ErrorMessage error={usage.error} />
      {usage.value && sums && (
        <>
          <dl className="facts usage-totals">
            <dt>Total cost</dt>
            <dd data-testid="usage-total-cost">{formatUsd(sums.costUsd)}</dd>
            <dt>Runs</dt>
            <dd data-testid="usage-runs">{sums.runs}</dd>
            <dt>Prompt tokens</dt>
            <dd>{sums.promptTokens}</dd>
            <dt>Completion tokens</dt>
            <dd>{sums.completionTokens}</dd>
          </dl>
          <p className="hint">
            Runs created from {range.from} through {range.to} (UTC). Cost is inference at the model
            catalogue&apos;s prices plus compute time.
          </p>
          <h2>Cost per day</h2>
          <CostChart
            days={costPerDay(usage.value.days.from, usage.value.days.to, usage.value.days.buckets)}
          />
          {BREAKDOWNS.map(([groupBy, title, keyHeading], i) => (
            <div key={groupBy}>
              <h2>{title}</h2>
              <BreakdownTable
                title={title}
                keyHeading={keyHeading}
                buckets={usage.value!.breakdowns[i].buckets}
              />
            </div>
          ))}
        </>
      )}
    </section>
  );
}
