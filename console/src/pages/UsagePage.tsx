import { useState, type FormEvent } from 'react';
import { api, data } from '../api/client';
import {
  costPerDay,
  dayRangeQuery,
  monthStart,
  totals,
  utcDay,
  type UsageBucket,
} from '../api/usage';
import { CostChart } from '../components/CostChart';
import { LimitsPanel } from '../components/LimitsPanel';
import { LimitsUse } from '../components/LimitsUse';
import { DataTable } from '../components/table';
import { ErrorMessage, useLoad } from '../components/ui';
import { formatCount, formatUsd } from '../format/money';
import { sourceLabel } from '../labels';

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

/**
 * A bucket's key for people: a user's or agent's name over its uid, a source's label over its
 * code, other keys as they are; `none` for runs without one.
 */
function BucketKey({ bucket, groupBy }: { bucket: UsageBucket; groupBy: Grouping }) {
  if (bucket.key === null) return <span className="muted">none</span>;
  const name = groupBy === 'source' ? sourceLabel(bucket.key) : bucket.name;
  if (!name || name === bucket.key) return <code>{bucket.key}</code>;
  return (
    <span className="named">
      {name}
      <code className="small muted">{bucket.key}</code>
    </span>
  );
}

function BreakdownTable({
  title,
  keyHeading,
  groupBy,
  buckets,
}: {
  title: string;
  keyHeading: string;
  groupBy: Grouping;
  buckets: UsageBucket[];
}) {
  return (
    <DataTable
      label={title}
      rows={buckets}
      rowKey={(b) => b.key ?? ''}
      empty={<p className="muted">No runs.</p>}
      columns={[
        {
          key: 'key',
          header: keyHeading,
          primary: true,
          cell: (b) => <BucketKey bucket={b} groupBy={groupBy} />,
        },
        { key: 'runs', header: 'Runs', numeric: true, cell: (b) => formatCount(b.runs) },
        {
          key: 'prompt',
          header: 'Prompt tokens',
          numeric: true,
          cell: (b) => formatCount(b.prompt_tokens),
        },
        {
          key: 'completion',
          header: 'Completion tokens',
          numeric: true,
          cell: (b) => formatCount(b.completion_tokens),
        },
        { key: 'cost', header: 'Cost', numeric: true, cell: (b) => formatUsd(b.cost_usd) },
      ]}
    />
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

  const againstLimits = useLoad(() => data(api.GET('/usage/limits')), []);

  const sums = usage.value && totals(usage.value.days.buckets);
  return (
    <section>
      <h1>Usage</h1>
      <ErrorMessage error={againstLimits.error} />
      {againstLimits.value && <LimitsUse use={againstLimits.value} />}
      <LimitsPanel onSaved={againstLimits.reload} />
      <h2>Runs and cost</h2>
      <form className="filters" onSubmit={apply} aria-label="Usage range">
        <div className="filter-row">
          <div className="filter-field">
            <label htmlFor="usage-from">From (UTC day)</label>
            <input
              id="usage-from"
              type="date"
              required
              value={draft.from}
              onChange={(event) => setDraft({ ...draft, from: event.target.value })}
            />
          </div>
          <div className="filter-field">
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
        </div>
      </form>
      <ErrorMessage error={usage.error} />
      {usage.value && sums && (
        <>
          <dl className="facts usage-totals">
            <dt>Total cost</dt>
            <dd data-testid="usage-total-cost">{formatUsd(sums.costUsd)}</dd>
            <dt>Runs</dt>
            <dd data-testid="usage-runs">{formatCount(sums.runs)}</dd>
            <dt>Prompt tokens</dt>
            <dd>{formatCount(sums.promptTokens)}</dd>
            <dt>Completion tokens</dt>
            <dd>{formatCount(sums.completionTokens)}</dd>
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
                groupBy={groupBy}
                buckets={usage.value!.breakdowns[i].buckets}
              />
            </div>
          ))}
        </>
      )}
    </section>
  );
}
