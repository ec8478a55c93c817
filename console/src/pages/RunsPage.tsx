import { useState, type ReactNode } from 'react';
import { api, data, type Schemas } from '../api/client';
import { CursorPager, ErrorMessage, StateBadge, useInterval, useLoad } from '../components/ui';
import { FilterBar, isoOf, type FilterField, type FilterValues } from '../components/filters';
import { DataTable, type Column } from '../components/table';
import { RelativeTime, RunDuration } from '../components/time';
import { runModel, TriggerLink } from '../components/run';
import { sourceLabel, stateLabel } from '../labels';
import { errorSummary } from '../format/run-error';
import { runCostUsd } from '../api/usage';
import { formatUsd } from '../format/money';
import { Link } from '../router';
import { RUN_STATES } from '../../../src/modules/runs/run-state';

type Run = Schemas['RunItem'];
/** The sources Ambient itself gives runs (the enum has more, for Oz compatibility). */
const SOURCES: Schemas['RunSourceType'][] = [
  'API',
  'WEB_APP',
  'CLI',
  'SCHEDULED_AGENT',
  'CUSTOM_WEBHOOK',
  'ORCHESTRATION',
  'LOCAL',
];
type FilterName = 'q' | 'state' | 'source' | 'name' | 'creator' | 'createdAfter' | 'createdBefore';

const FILTERS: FilterField<FilterName>[] = [
  { name: 'q', label: 'Search', type: 'search', placeholder: 'prompt, title…' },
  {
    name: 'state',
    label: 'State',
    type: 'select',
    options: RUN_STATES.map((state) => ({ value: state, label: stateLabel(state) })),
  },
  {
    name: 'source',
    label: 'Source',
    type: 'select',
    options: SOURCES.map((source) => ({ value: source, label: sourceLabel(source) })),
  },
  { name: 'name', label: 'Config name', advanced: true },
  { name: 'creator', label: 'Creator id', advanced: true },
  { name: 'createdAfter', label: 'Created after', type: 'datetime', advanced: true },
  { name: 'createdBefore', label: 'Created before', type: 'datetime', advanced: true },
];
const NO_FILTERS: FilterValues<FilterName> = {
  q: '',
  state: '',
  source: '',
  name: '',
  creator: '',
  createdAfter: '',
  createdBefore: '',
};

/** The run list's columns, in order: add a column by adding an entry. */
export const RUN_COLUMNS: Column<Run>[] = [
  {
    key: 'run',
    header: 'Run',
    cell: (run) => (
      <Link to={`/runs/${encodeURIComponent(run.run_id)}`}>{run.title || run.run_id}</Link>
    ),
  },
  { key: 'state', header: 'State', cell: (run) => <RunState run={run} /> },
  { key: 'error', header: 'Error', cell: (run) => <RunErrorCell run={run} /> },
  { key: 'duration', header: 'Duration', cell: (run) => <RunDuration run={run} /> },
  { key: 'model', header: 'Model', cell: (run) => <code>{runModel(run)}</code> },
  { key: 'trigger', header: 'Trigger', cell: (run) => <TriggerLink run={run} /> },
  {
    key: 'creator',
    header: 'Creator',
    cell: (run) => run.creator?.display_name ?? run.creator?.uid ?? '—',
  },
  { key: 'created', header: 'Created', cell: (run) => <RelativeTime value={run.created_at} /> },
  { key: 'cost', header: 'Cost', cell: (run) => <RunCost run={run} /> },
];

/** The state, and why a queued run waits when a concurrency limit holds it. */
function RunState({ run }: { run: Run }) {
  return (
    <>
      <StateBadge state={run.state} />
      {run.at_capacity && run.state === 'QUEUED' && (
        <span
          className="state-note"
          data-testid="at-capacity"
          title="The concurrency limit (max_concurrent_runs) of its team or agent is reached: it starts when another run ends."
        >
          waiting for a free slot
        </span>
      )}
    </>
  );
}

/** A failed run's error in a line: its code's label and its message's first line (all on hover). */
function RunErrorCell({ run }: { run: Run }) {
  const status = run.status_message;
  if (!['FAILED', 'ERROR'].includes(run.state) || !status) return null;
  return (
    <span className="error-cell" title={status.message} data-testid="run-error-summary">
      {errorSummary(status)}
    </span>
  );
}

/** What the run has cost so far (inference + compute), or a dash before its first usage. */
function RunCost({ run }: { run: Run }) {
  const cost = runCostUsd(run.request_usage);
  if (cost === undefined) return <span className="muted">—</span>;
  return <span data-testid="run-cost">{formatUsd(cost)}</span>;
}

/** What to do when there are no runs: start one here, or with the API. */
function NoRuns({ filtered }: { filtered: boolean }) {
  if (filtered) return <p className="muted">No runs match these filters.</p>;
  const curl = `curl -X POST ${window.location.origin}/api/v1/agent/runs \\
  -H "Authorization: Bearer $AMBIENT_API_KEY" -H "Content-Type: application/json" \\
  -d '{"prompt": "Say hello"}'`;
  return (
    <div className="empty-state">
      <p>
        <strong>No runs yet.</strong> Start one here, or from a script with the API:
      </p>
      <p>
        <Link to="/runs/new" className="button primary">
          Start a run
        </Link>
      </p>
      <pre>{curl}</pre>
    </div>
  );
}

export function RunsTable({
  runs,
  columns = RUN_COLUMNS,
  empty = <NoRuns filtered={false} />,
}: {
  runs: Run[];
  columns?: Column<Run>[];
  empty?: ReactNode;
}) {
  return (
    <DataTable
      label="Runs"
      rows={runs}
      columns={columns}
      rowKey={(run) => run.run_id}
      empty={empty}
    />
  );
}

export function RunsPage() {
  const [filters, setFilters] = useState(NO_FILTERS);
  const [cursors, setCursors] = useState<string[]>([]);
  const [autoRefresh, setAutoRefresh] = useState(true);
  const cursor = cursors[cursors.length - 1];
  const filtered = Object.values(filters).some(Boolean);

  const page = useLoad(
    () =>
      data(
        api.GET('/agent/runs', {
          params: {
            query: {
              limit: 20,
              cursor,
              // Newest first, by creation: a row keeps its place however its run changes.
              sort_by: 'created_at',
              sort_order: 'desc',
              state: filters.state ? [filters.state as Schemas['RunState']] : undefined,
              source: filters.source ? [filters.source as Schemas['RunSourceType']] : undefined,
              name: filters.name || undefined,
              creator: filters.creator || undefined,
              created_after: isoOf(filters.createdAfter),
              created_before: isoOf(filters.createdBefore),
              q: filters.q || undefined,
            },
          },
        }),
      ),
    [filters, cursor],
  );
  useInterval(page.reload, 5000, autoRefresh);

  return (
    <section>
      <div className="page-head">
        <h1>Runs</h1>
        <Link to="/runs/new" className="button primary">
          New run
        </Link>
      </div>
      <FilterBar
        label="Filter runs"
        idPrefix="filter"
        fields={FILTERS}
        empty={NO_FILTERS}
        onApply={(values) => {
          setCursors([]);
          setFilters(values);
        }}
      />
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
      {page.value && <RunsTable runs={page.value.runs} empty={<NoRuns filtered={filtered} />} />}
      <CursorPager cursors={cursors} setCursors={setCursors} pageInfo={page.value?.page_info} />
    </section>
  );
}
