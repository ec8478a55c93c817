import { useEffect, useState } from 'react';
import { api, data } from '../api/client';
import type { InboxItem } from '../api/approvals';
import { ApprovalCard, type Decided } from '../components/ApprovalControls';
import { CursorPager, ErrorMessage, StateBadge, useInterval, useLoad } from '../components/ui';
import { Link, useRoute } from '../router';

const TABS = [
  ['pending', 'Pending'],
  ['decided', 'Decided'],
] as const;
type Tab = (typeof TABS)[number][0];
const REFRESH_MS = 10_000;

/**
 * The page's requests: the server's page, with the ones decided here shown as decided (and kept
 * in view on the Pending tab until the person leaves, so a click's outcome does not vanish with
 * the next refresh).
 */
function shown(fresh: InboxItem[], decidedHere: Map<string, InboxItem>): InboxItem[] {
  const byId = new Map(fresh.map((item) => [item.id, decidedHere.get(item.id) ?? item]));
  for (const [id, item] of decidedHere) if (!byId.has(id)) byId.set(id, item);
  return [...byId.values()].sort((a, b) => b.requested_at.localeCompare(a.requested_at));
}

function RunLine({ item }: { item: InboxItem }) {
  return (
    <p className="approval-run">
      <span className="label">Run</span>{' '}
      <Link to={`/runs/${encodeURIComponent(item.run_id)}`}>{item.run_title || item.run_id}</Link>{' '}
      <StateBadge state={item.run_state} />
    </p>
  );
}

/** The team's approval inbox: requests of its runs waiting for a person, and the decided ones. */
export function ApprovalsPage() {
  const { query } = useRoute();
  const tab: Tab = query.get('state') === 'decided' ? 'decided' : 'pending';
  const [cursors, setCursors] = useState<string[]>([]);
  const [decidedHere, setDecidedHere] = useState(new Map<string, InboxItem>());
  useEffect(() => {
    setCursors([]);
    setDecidedHere(new Map());
  }, [tab]);
  const cursor = cursors.at(-1);
  const me = useLoad(() => data(api.GET('/me')), []);
  const page = useLoad(
    () => data(api.GET('/agent/approvals', { params: { query: { state: tab, cursor } } })),
    [tab, cursor],
  );
  useInterval(page.reload, REFRESH_MS, tab === 'pending');

  const [conflicts, setConflicts] = useState(new Map<string, string>());
  const decided: (item: InboxItem) => Decided = (item) => (approval, outcome) => {
    const runState = outcome.runState ?? item.run_state;
    setDecidedHere((known) =>
      new Map(known).set(item.id, { ...item, ...approval, run_state: runState }),
    );
    if (outcome.conflict) setConflicts((known) => new Map(known).set(item.id, outcome.conflict!));
  };
  const items = page.value ? shown(page.value.approvals, decidedHere) : [];

  return (
    <section>
      <div className="page-head">
        <h1>Approvals</h1>
      </div>
      <p className="hint">
        Runs wait here, BLOCKED and holding no sandbox, when an approval rule asks before a tool
        call or the agent asks a question. A decision queues the run again.
      </p>
      <nav className="tabs" aria-label="Approval requests">
        {TABS.map(([state, label]) => (
          <Link
            key={state}
            to={state === 'pending' ? '/approvals' : `/approvals?state=${state}`}
            aria-current={tab === state ? 'page' : undefined}
          >
            {label}
          </Link>
        ))}
      </nav>
      <ErrorMessage error={page.error ?? me.error} />
      {page.value && items.length === 0 && (
        <p className="empty-state">
          {tab === 'pending'
            ? 'Nothing waits for a person: no run is blocked on a request.'
            : 'No request has been decided yet.'}
        </p>
      )}
      <div className="approval-list">
        {items.map((item) => (
          <ApprovalCard
            key={item.id}
            approval={item}
            role={me.value?.role}
            runState={item.run_state}
            onDecided={decided(item)}
            conflict={conflicts.get(item.id)}
            heading={<RunLine item={item} />}
          />
        ))}
      </div>
      <CursorPager cursors={cursors} setCursors={setCursors} pageInfo={page.value?.page_info} />
    </section>
  );
}
