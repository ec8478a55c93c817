import { useState, type FormEvent } from 'react';
import { api, ApiError, data, type Schemas } from '../api/client';
import { SelectField, TextField } from '../components/form';
import { DataTable } from '../components/table';
import {
  ConfirmButton,
  CursorPager,
  ErrorMessage,
  Json,
  Notice,
  RelativeTime,
  ShownOnce,
  useInterval,
  useLoad,
} from '../components/ui';

type Endpoint = Schemas['NotificationEndpoint'];
type Event = Schemas['CreateNotificationEndpointRequest']['events'][number];
type Format = NonNullable<Schemas['CreateNotificationEndpointRequest']['format']>;

const EVENTS: { value: Event; label: string }[] = [
  { value: 'run.succeeded', label: 'Run succeeded' },
  { value: 'run.failed', label: 'Run failed' },
  { value: 'run.cancelled', label: 'Run cancelled' },
  { value: 'run.blocked', label: 'Run blocked' },
  { value: 'approval.requested', label: 'Approval requested' },
  { value: 'approval.decided', label: 'Approval decided' },
];

const FORMATS: { value: Format; label: string }[] = [
  { value: 'standard', label: 'Standard Webhooks JSON' },
  { value: 'slack', label: 'Slack incoming webhook ({"text": …})' },
];

interface Fields {
  url: string;
  events: Event[];
  format: Format;
  enabled: boolean;
}

/** What the form edits of an endpoint (PATCH takes these fields only). */
function fieldsOf(endpoint: Endpoint): Fields {
  return {
    url: endpoint.url,
    events: endpoint.events as Event[],
    format: endpoint.format as Format,
    enabled: endpoint.enabled,
  };
}

/** The add / edit form of an endpoint: URL, events (checkboxes), format, enabled. */
function EndpointForm({
  initial,
  title,
  submitLabel,
  save,
  onCancel,
}: {
  initial: Fields;
  title: string;
  submitLabel: string;
  save: (fields: Fields) => Promise<void>;
  onCancel?: () => void;
}) {
  const [fields, setFields] = useState(initial);
  const [error, setError] = useState<unknown>();
  const set = (change: Partial<Fields>) => setFields({ ...fields, ...change });
  const id = title.toLowerCase().replace(/\W+/g, '-');
  async function submit(event: FormEvent) {
    event.preventDefault();
    setError(undefined);
    try {
      await save(fields);
    } catch (failure) {
      setError(failure);
    }
  }
  return (
    <form className="stack" onSubmit={submit} aria-label={title}>
      <h2>{title}</h2>
      <TextField
        id={`${id}-url`}
        label="URL"
        type="url"
        required
        placeholder="https://hooks.example.com/ambient"
        value={fields.url}
        onChange={(url) => set({ url })}
      />
      <fieldset>
        <legend>Events</legend>
        {EVENTS.map((event) => (
          <label className="inline" key={event.value}>
            <input
              type="checkbox"
              checked={fields.events.includes(event.value)}
              onChange={(e) =>
                set({
                  events: e.target.checked
                    ? [...fields.events, event.value]
                    : fields.events.filter((v) => v !== event.value),
                })
              }
            />
            {event.label}
          </label>
        ))}
      </fieldset>
      <SelectField
        id={`${id}-format`}
        label="Format"
        value={fields.format}
        onChange={(format) => set({ format: format as Format })}
        options={FORMATS}
      />
      <label className="inline">
        <input
          type="checkbox"
          checked={fields.enabled}
          onChange={(e) => set({ enabled: e.target.checked })}
        />
        Enabled
      </label>
      <div className="actions">
        <button type="submit" className="primary">
          {submitLabel}
        </button>
        {onCancel && (
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
      <ErrorMessage error={error} />
    </form>
  );
}

/** An endpoint's delivery log, newest first, with Resend on failed deliveries. */
function DeliveryLog({ endpoint }: { endpoint: Endpoint }) {
  const [cursors, setCursors] = useState<string[]>([]);
  const [error, setError] = useState<unknown>();
  const cursor = cursors.at(-1);
  const log = useLoad(
    () =>
      data(
        api.GET('/notification-endpoints/{id}/deliveries', {
          params: { path: { id: endpoint.id }, query: { limit: 25, cursor } },
        }),
      ),
    [endpoint.id, cursor],
  );
  useInterval(log.reload, 3000);
  async function resend(deliveryId: string) {
    setError(undefined);
    try {
      await data(
        api.POST('/notification-endpoints/{id}/deliveries/{deliveryId}/resend', {
          params: { path: { id: endpoint.id, deliveryId } },
        }),
      );
      log.reload();
    } catch (failure) {
      setError(failure);
    }
  }
  return (
    <>
      <h3>Delivery log</h3>
      <ErrorMessage error={log.error ?? error} />
      <DataTable
        label="Notification deliveries"
        rows={log.value?.deliveries ?? []}
        rowKey={(delivery) => delivery.id}
        columns={[
          {
            key: 'created',
            header: 'Created',
            cell: (delivery) => <RelativeTime value={delivery.created_at} />,
          },
          { key: 'event', header: 'Event', cell: (delivery) => <code>{delivery.event}</code> },
          {
            key: 'status',
            header: 'Status',
            cell: (delivery) => (
              <span className={`badge notification-${delivery.status}`}>{delivery.status}</span>
            ),
          },
          { key: 'attempts', header: 'Attempts', cell: (delivery) => delivery.attempts },
          {
            key: 'response',
            header: 'Response',
            cell: (delivery) => (
              <>
                {delivery.response_code ?? '—'}
                {delivery.last_error && <div className="error-text">{delivery.last_error}</div>}
              </>
            ),
          },
          {
            key: 'next',
            header: 'Next attempt',
            cell: (delivery) => <RelativeTime value={delivery.next_attempt_at} />,
          },
          {
            key: 'actions',
            header: 'Actions',
            hiddenHeader: true,
            cell: (delivery) => (
              <>
                <Json value={delivery.payload} summary="Payload" />
                {delivery.status === 'failed' && (
                  <button type="button" onClick={() => void resend(delivery.id)}>
                    Resend
                  </button>
                )}
              </>
            ),
          },
        ]}
        empty={<p className="muted">No deliveries yet: they appear here when a run ends.</p>}
      />
      <CursorPager cursors={cursors} setCursors={setCursors} pageInfo={log.value?.page_info} />
    </>
  );
}

/** Team admins' outgoing webhooks: endpoints, their secrets (shown once) and delivery logs. */
export function NotificationsPage() {
  const list = useLoad(() => data(api.GET('/notification-endpoints')), []);
  const [secret, setSecret] = useState<Schemas['NotificationEndpointWithSecret']>();
  const [selected, setSelected] = useState<string>();
  const [editing, setEditing] = useState<string>();
  const [error, setError] = useState<unknown>();
  const endpoints = list.value?.endpoints ?? [];
  const current = endpoints.find((e) => e.id === selected);

  async function act(action: () => Promise<unknown>) {
    setError(undefined);
    try {
      await action();
      list.reload();
    } catch (failure) {
      setError(failure);
    }
  }

  const create = async (body: Fields) => {
    const created = await data(api.POST('/notification-endpoints', { body }));
    setSecret(created);
    setSelected(created.id);
    list.reload();
  };
  const update = (id: string) => async (body: Fields) => {
    await data(api.PATCH('/notification-endpoints/{id}', { params: { path: { id } }, body }));
    setEditing(undefined);
    list.reload();
  };
  const rotate = (id: string) =>
    act(async () =>
      setSecret(
        await data(
          api.POST('/notification-endpoints/{id}/rotate-secret', { params: { path: { id } } }),
        ),
      ),
    );
  const remove = (id: string) =>
    act(() => data(api.DELETE('/notification-endpoints/{id}', { params: { path: { id } } })));

  if (list.error instanceof ApiError && list.error.status === 403) {
    return (
      <section>
        <h1>Notifications</h1>
        <Notice>Only an admin can manage notification endpoints ({list.error.message}).</Notice>
      </section>
    );
  }
  return (
    <section>
      <h1>Notifications</h1>
      <ErrorMessage error={list.error ?? error} />
      {secret && (
        <div role="status" aria-label="Signing secret">
          <Notice>
            The signing secret of <code>{secret.url}</code> is shown only now: copy it to verify
            deliveries (Standard Webhooks).
          </Notice>
          <ShownOnce label="Signing secret" value={secret.secret} />
          <button type="button" onClick={() => setSecret(undefined)}>
            Done
          </button>
        </div>
      )}
      <DataTable
        label="Notification endpoints"
        rows={endpoints}
        rowKey={(endpoint) => endpoint.id}
        selected={selected ?? ''}
        columns={[
          { key: 'url', header: 'URL', cell: (endpoint) => <code>{endpoint.url}</code> },
          { key: 'events', header: 'Events', cell: (endpoint) => endpoint.events.join(', ') },
          { key: 'format', header: 'Format', cell: (endpoint) => endpoint.format },
          {
            key: 'enabled',
            header: 'Enabled',
            cell: (endpoint) => (endpoint.enabled ? 'yes' : 'no'),
          },
          {
            key: 'actions',
            header: 'Actions',
            hiddenHeader: true,
            cell: (endpoint) => (
              <>
                <button type="button" onClick={() => setSelected(endpoint.id)}>
                  Deliveries
                </button>{' '}
                <button type="button" onClick={() => setEditing(endpoint.id)}>
                  Edit
                </button>{' '}
                <ConfirmButton
                  label="Rotate secret"
                  question="Rotate the signing secret? Deliveries are signed with the new one from now on."
                  confirm="Rotate"
                  onConfirm={() => void rotate(endpoint.id)}
                />{' '}
                <ConfirmButton
                  label="Delete"
                  question={`Delete the endpoint ${endpoint.url} and its delivery log?`}
                  confirm="Delete"
                  className="danger"
                  onConfirm={() => void remove(endpoint.id)}
                />
              </>
            ),
          },
        ]}
        empty={<p className="muted">No endpoints yet: add one below.</p>}
      />
      {editing && endpoints.some((e) => e.id === editing) && (
        <EndpointForm
          key={editing}
          title="Edit endpoint"
          submitLabel="Save"
          initial={fieldsOf(endpoints.find((e) => e.id === editing)!)}
          save={update(editing)}
          onCancel={() => setEditing(undefined)}
        />
      )}
      {current && <DeliveryLog key={current.id} endpoint={current} />}
      <EndpointForm
        title="New endpoint"
        submitLabel="Add endpoint"
        initial={{ url: '', events: ['run.failed'], format: 'standard', enabled: true }}
        save={create}
      />
    </section>
  );
}
