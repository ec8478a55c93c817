import { useState } from 'react';
import { api, data, type Schemas } from '../api/client';
import { CursorPager, ErrorMessage, useLoad } from '../components/ui';
import { FilterBar, isoOf, type FilterField, type FilterValues } from '../components/filters';
import { DataTable, type Column } from '../components/table';
import { RelativeTime } from '../components/time';
import { AUDIT_OUTCOMES } from '../../../src/modules/audit/audit-vocabulary';
import {
  auditActionLabel,
  auditActor,
  auditOutcomeLabel,
  auditTarget,
  detailLines,
  type Linked,
} from '../format/audit';
import { Link } from '../router';

type FilterName = 'action' | 'outcome' | 'actorId' | 'targetType' | 'targetId' | 'since' | 'until';

const FILTERS: FilterField<FilterName>[] = [
  { name: 'action', label: 'Action', placeholder: 'secret.update or secret.*' },
  {
    name: 'outcome',
    label: 'Outcome',
    type: 'select',
    options: AUDIT_OUTCOMES.map((outcome) => ({
      value: outcome,
      label: auditOutcomeLabel(outcome),
    })),
  },
  { name: 'actorId', label: 'Actor id' },
  {
    name: 'targetType',
    label: 'Target type',
    placeholder: 'run, secret, webhook…',
    advanced: true,
  },
  { name: 'targetId', label: 'Target id', advanced: true },
  { name: 'since', label: 'Since', type: 'datetime', advanced: true },
  { name: 'until', label: 'Until', type: 'datetime', advanced: true },
];
const NO_FILTERS: FilterValues<FilterName> = {
  action: '',
  outcome: '',
  actorId: '',
  targetType: '',
  targetId: '',
  since: '',
  until: '',
};

type AuditEvent = Schemas['AuditEvent'];

/** Text that links to a console page when it has one. */
function MaybeLink({ linked }: { linked: Linked }) {
  return linked.to ? <Link to={linked.to}>{linked.text}</Link> : <>{linked.text}</>;
}

/** `environment.accept_share_link`, breakable after its dot rather than anywhere. */
function ActionCode({ action }: { action: string }) {
  const [resource, ...rest] = action.split('.');
  return (
    <code className="small muted action-code">
      {resource}
      {rest.length > 0 && (
        <>
          .<wbr />
          {rest.join('.')}
        </>
      )}
    </code>
  );
}

function Details({ details }: { details: Record<string, unknown> }) {
  const lines = detailLines(details);
  if (lines.length === 0) return <span className="muted">—</span>;
  return (
    <dl className="kv">
      {lines.map((line) => (
        <div key={line.key}>
          <dt>{line.key}</dt>
          <dd>{line.to ? <Link to={line.to}>{line.value}</Link> : line.value}</dd>
        </div>
      ))}
    </dl>
  );
}

const COLUMNS: Column<AuditEvent>[] = [
  { key: 'when', header: 'When', cell: (event) => <RelativeTime value={event.occurred_at} /> },
  {
    key: 'actor',
    header: 'Actor',
    cell: (event) => (
      <span className="named">
        <MaybeLink linked={auditActor(event.actor)} />
        <span className="small muted">
          {event.actor.type}
          {event.actor.role ? ` · ${event.actor.role}` : ''}
          {event.actor.on_behalf_of
            ? ` · for ${event.actor.on_behalf_of.name ?? event.actor.on_behalf_of.id}`
            : ''}
        </span>
      </span>
    ),
  },
  {
    key: 'action',
    header: 'Action',
    primary: true,
    cell: (event) => (
      <span className="named" data-action={event.action}>
        {auditActionLabel(event.action)}
        <ActionCode action={event.action} />
      </span>
    ),
  },
  {
    key: 'target',
    header: 'Target',
    cell: (event) => {
      const target = auditTarget(event);
      if (!target) return <span className="muted">—</span>;
      return (
        <span className="named" data-testid="audit-target">
          <MaybeLink linked={target} />
          {target.id && <code className="small muted">{target.id}</code>}
        </span>
      );
    },
  },
  {
    key: 'outcome',
    header: 'Outcome',
    cell: (event) => (
      <span
        className={`badge outcome-${event.outcome}`}
        data-outcome={event.outcome}
        title={event.outcome}
      >
        {auditOutcomeLabel(event.outcome)}
      </span>
    ),
  },
  { key: 'details', header: 'Details', cell: (event) => <Details details={event.details} /> },
];

/** The team's audit log (team admins): filters, newest first, cursor pages. */
export function AuditPage() {
  const [filters, setFilters] = useState(NO_FILTERS);
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors[cursors.length - 1];

  const page = useLoad(
    () =>
      data(
        api.GET('/audit-events', {
          params: {
            query: {
              limit: 50,
              cursor,
              action: filters.action || undefined,
              actor_id: filters.actorId || undefined,
              target_type: filters.targetType || undefined,
              target_id: filters.targetId || undefined,
              outcome: (filters.outcome || undefined) as Schemas['AuditEvent']['outcome'],
              since: isoOf(filters.since),
              until: isoOf(filters.until),
            },
          },
        }),
      ),
    [filters, cursor],
  );

  return (
    <section>
      <h1>Audit log</h1>
      <FilterBar
        label="Filter audit events"
        idPrefix="audit"
        fields={FILTERS}
        empty={NO_FILTERS}
        onApply={(values) => {
          setCursors([]);
          setFilters(values);
        }}
      />
      <ErrorMessage error={page.error} />
      {page.value && (
        <DataTable
          label="Audit events"
          rows={page.value.events}
          columns={COLUMNS}
          rowKey={(event) => event.id}
          empty={<p className="muted">No audit events.</p>}
        />
      )}
      <CursorPager cursors={cursors} setCursors={setCursors} pageInfo={page.value?.page_info} />
    </section>
  );
}
