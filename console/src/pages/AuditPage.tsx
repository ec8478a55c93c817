import { useState, type FormEvent } from 'react';
import { api, data, type Schemas } from '../api/client';
import { CursorPager, ErrorMessage, FilterActions, Time, useLoad } from '../components/ui';
import { AUDIT_OUTCOMES } from '../../../src/modules/audit/audit-vocabulary';

interface Filters {
  action: string;
  actorId: string;
  targetType: string;
  targetId: string;
  outcome: string;
  since: string;
  until: string;
}
const NO_FILTERS: Filters = {
  action: '',
  actorId: '',
  targetType: '',
  targetId: '',
  outcome: '',
  since: '',
  until: '',
};

const iso = (local: string) => (local ? new Date(local).toISOString() : undefined);

function Details({ details }: { details: Record<string, unknown> }) {
  const entries = Object.entries(details);
  if (entries.length === 0) return <>—</>;
  return <code>{JSON.stringify(details)}</code>;
}

function EventsTable({ events }: { events: Schemas['AuditEvent'][] }) {
  if (events.length === 0) return <p className="muted">No audit events.</p>;
  return (
    <div className="table-wrap">
      <table aria-label="Audit events">
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Actor</th>
            <th scope="col">Action</th>
            <th scope="col">Target</th>
            <th scope="col">Outcome</th>
            <th scope="col">Details</th>
          </tr>
        </thead>
        <tbody>
          {events.map((event) => (
            <tr key={event.id}>
              <td>
                <Time value={event.occurred_at} />
              </td>
              <td>
                {event.actor.name ?? event.actor.id}
                <br />
                <span className="muted">
                  {event.actor.type}
                  {event.actor.role ? ` · ${event.actor.role}` : ''}
                </span>
              </td>
              <td>
                <code>{event.action}</code>
              </td>
              <td>{event.target ? `${event.target.type} ${event.target.id ?? ''}` : '—'}</td>
              <td className={event.outcome === 'success' ? undefined : 'error-text'}>
                {event.outcome}
              </td>
              <td>
                <Details details={event.details} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The team's audit log (team admins): filters, newest first, cursor pages. */
export function AuditPage() {
  const [draft, setDraft] = useState<Filters>(NO_FILTERS);
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
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
              since: iso(filters.since),
              until: iso(filters.until),
            },
          },
        }),
      ),
    [filters, cursor],
  );

  const field = (name: keyof Filters) => ({
    id: `audit-${name}`,
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
      <h1>Audit log</h1>
      <form className="filters" onSubmit={apply} aria-label="Filter audit events">
        <div>
          <label htmlFor="audit-action">Action</label>
          <input placeholder="secret.update or secret.*" {...field('action')} />
        </div>
        <div>
          <label htmlFor="audit-outcome">Outcome</label>
          <select {...field('outcome')}>
            <option value="">Any</option>
            {AUDIT_OUTCOMES.map((outcome) => (
              <option key={outcome} value={outcome}>
                {outcome}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label htmlFor="audit-actorId">Actor id</label>
          <input {...field('actorId')} />
        </div>
        <div>
          <label htmlFor="audit-targetType">Target type</label>
          <input placeholder="run, secret, webhook…" {...field('targetType')} />
        </div>
        <div>
          <label htmlFor="audit-targetId">Target id</label>
          <input {...field('targetId')} />
        </div>
        <div>
          <label htmlFor="audit-since">Since</label>
          <input type="datetime-local" {...field('since')} />
        </div>
        <div>
          <label htmlFor="audit-until">Until</label>
          <input type="datetime-local" {...field('until')} />
        </div>
        <FilterActions
          onClear={() => {
            setDraft(NO_FILTERS);
            setFilters(NO_FILTERS);
            setCursors([]);
          }}
        />
      </form>
      <ErrorMessage error={page.error} />
      {page.value && <EventsTable events={page.value.events} />}
      <CursorPager cursors={cursors} setCursors={setCursors} pageInfo={page.value?.page_info} />
    </section>
  );
}
