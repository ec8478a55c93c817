import { useState, type FormEvent } from 'react';
import { api, data, type Schemas } from '../api/client';
import {
  CursorPager,
  ErrorMessage,
  FilterActions,
  StateBadge,
  Time,
  useInterval,
  useLoad,
} from '../components/ui';
import { formatUsd, runCostUsd } from '../api/usage';
import { Link } from '../router';
import { RUN_STATES } from '../../../src/modules/runs/run-state';

const SOURCES: Schemas['RunSourceType'][] = [
  'API',
  'SCHEDULED_AGENT',
  'CUSTOM_WEBHOOK',
  'LOCAL',
  'WEB_APP',
  'ORCHESTRATION',
  'CLI',
];

interface Filters {
  state: string;
  name: string;
  source: string;
  creator: string;
  createdAfter: string;
  createdBefore: string;
  q: string;
}
const NO_FILTERS: Filters = {
  state: '',
  name: '',
  source: '',
  creator: '',
  createdAfter: '',
  createdBefore: '',
  q: '',
};

const iso = (local: string) => (local ? new Date(local).toISOString() : undefined);

function costText(run: Schemas['RunItem']): string | undefined {
  const cost = runCostUsd(run.request_usage);
  return cost === undefined ? undefined : formatUsd(cost);
}

export function RunsTable({ runs }: { runs: Schemas['RunItem'][] }) {
  if (runs.length === 0) return <p className="muted">No runs.</p>;
  return (
    <div className="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Run</th>
            <th scope="col">State</th>
            <th scope="col">Source</th>
            <th scope="col">Creator</th>
            <th scope="col">Created</th>
            <th scope="col">Cost</th>
          </tr>
        </thead>
        <tbody>
          {runs.map((run) => (
            <tr key={run.run_id}>
              <td>
                <Link to={`/runs/${encodeURIComponent(run.run_id)}`}>
                  {run.title || run.run_id}
                </Link>
              </td>
              <td>
                <StateBadge state={run.state} />
              </td>
              <td>{run.source ?? '—'}</td>
              <td>{run.creator?.display_name ?? run.creator?.uid ?? '—'}</td>
              <td>
                <Time value={run.created_at} />
              </td>
              <td data-testid="run-cost">{costText(run) ?? <span className="muted">—</span>}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function RunsPage() {
  const [draft, setDraft] = useState<Filters>(NO_FILTERS);
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const [cursors, setCursors] = useState<string[]>([]);
  const [autoRefresh, setAutoRefresh] = useState(true);
  const cursor = cursors[cursors.length - 1];

  const page = useLoad(
    () =>
      data(
        api.GET('/agent/runs', {
          params: {
            query: {
              limit: 20,
              cursor,
              state: filters.state ? [filters.state as Schemas['RunState']] : undefined,
              source: filters.source ? [filters.source as Schemas['RunSourceType']] : undefined,
              name: filters.name || undefined,
              creator: filters.creator || undefined,
              created_after: iso(filters.createdAfter),
              created_before: iso(filters.createdBefore),
              q: filters.q || undefined,
            },
          },
        }),
      ),
    [filters, cursor],
  );
  useInterval(page.reload, 5000, autoRefresh);

  const field = (name: keyof Filters) => ({
    id: `filter-${name}`,
    value: draft[name],
    onChange: (event: { target: { value: string } }) =>
      setDraft({ ...draft, [name]: event.target.value }),
  });

  function apply(event: FormEvent) {
    event.preventDefault();
    setCursors([]);
    setFilters(draft);
  }

  return (
    <section>
      <div className="page-head">
        <h1>Runs</h1>
        <Link to="/runs/new" className="button primary">
          New run
        </Link>
      </div>
      <form className="filters" onSubmit={apply} aria-label="Filter runs">
        <div>
          <label htmlFor="filter-q">Search</label>
          <input type="search" placeholder="prompt, title…" {...field('q')} />
        </div>
        <div>
          <label htmlFor="filter-state">State</label>
          <select {...field('state')}>
            <option value="">Any</option>
            {RUN_STATES.map((state) => (
              <option key={state} value={state}>
                {state}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label htmlFor="filter-source">Source</label>
          <select {...field('source')}>
            <option value="">Any</option>
            {SOURCES.map((source) => (
              <option key={source} value={source}>
                {source}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label htmlFor="filter-name">Name</label>
          <input {...field('name')} />
        </div>
        <div>
          <label htmlFor="filter-creator">Creator</label>
          <input {...field('creator')} />
        </div>
        <div>
          <label htmlFor="filter-createdAfter">Created after</label>
          <input type="datetime-local" {...field('createdAfter')} />
        </div>
        <div>
          <label htmlFor="filter-createdBefore">Created before</label>
          <input type="datetime-local" {...field('createdBefore')} />
        </div>
        <FilterActions
          onClear={() => {
            setDraft(NO_FILTERS);
            setFilters(NO_FILTERS);
            setCursors([]);
          }}
        />
      </form>
      <div className="toolbar">
        <label className="inline">
          <input
            type="checkbox"
            checked={autoRefresh}
            onChange={(event) => setAutoRefresh(event.target.checked)}
          />
          Auto-refresh every 5 s
        </label>
        <button type="button" onClick={page.reload}>
          Refresh
        </button>
      </div>
      <ErrorMessage error={page.error} />
      {page.value && <RunsTable runs={page.value.runs} />}
      <CursorPager cursors={cursors} setCursors={setCursors} pageInfo={page.value?.page_info} />
    </section>
  );
}
