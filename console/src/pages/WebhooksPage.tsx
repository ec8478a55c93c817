import { useState, type FormEvent } from 'react';
import { api, data, type Schemas } from '../api/client';
import { registeredNames } from '../api/registries';
import {
  ConfirmButton,
  ErrorMessage,
  Json,
  Notice,
  ShownOnce,
  useInterval,
  useLoad,
} from '../components/ui';
import { Link, useRoute } from '../router';
import { DataTable } from '../components/table';
import { RelativeTime } from '../components/time';
import { authModeLabel } from '../labels';
import { Automations } from './Automations';

type Webhook = Schemas['Webhook'];
type Delivery = Schemas['WebhookDelivery'];

function NewFactory({ onCreated }: { onCreated: (uid: string) => void }) {
  const [name, setName] = useState('');
  const [error, setError] = useState<unknown>();
  async function submit(event: FormEvent) {
    event.preventDefault();
    try {
      const created = await data(api.POST('/factory', { body: { name } }));
      setName('');
      onCreated(created.uid);
    } catch (failure) {
      setError(failure);
    }
  }
  return (
    <form className="stack" onSubmit={submit}>
      <label htmlFor="factory-name">New factory name</label>
      <input id="factory-name" required value={name} onChange={(e) => setName(e.target.value)} />
      <div className="actions">
        <button type="submit">Create factory</button>
      </div>
      <ErrorMessage error={error} />
    </form>
  );
}

function NewWebhook({
  factoryUid,
  onCreated,
}: {
  factoryUid: string;
  onCreated: (hook: Schemas['WebhookWithSecret']) => void;
}) {
  const [name, setName] = useState('');
  const [authMode, setAuthMode] = useState<Schemas['CreateWebhookRequest']['auth_mode']>('token');
  // Any scheme the server registers (extensions too): the generated type lists only built-ins.
  const [scheme, setScheme] = useState('standard_webhooks');
  const schemes = useLoad(() => registeredNames('CreateWebhookRequest', 'signature_scheme'), [])
    .value ?? [scheme];
  const [error, setError] = useState<unknown>();
  async function submit(event: FormEvent) {
    event.preventDefault();
    setError(undefined);
    try {
      const created = await data(
        api.POST('/factory/{factoryUid}/webhooks', {
          params: { path: { factoryUid } },
          body: {
            name,
            auth_mode: authMode,
            signature_scheme:
              authMode === 'signature'
                ? (scheme as Schemas['CreateWebhookRequest']['signature_scheme'])
                : undefined,
          },
        }),
      );
      setName('');
      onCreated(created);
    } catch (failure) {
      setError(failure);
    }
  }
  return (
    <form className="stack" onSubmit={submit} aria-label="New webhook">
      <label htmlFor="webhook-name">Webhook name</label>
      <input id="webhook-name" required value={name} onChange={(e) => setName(e.target.value)} />
      <label htmlFor="webhook-auth">Authentication</label>
      <select
        id="webhook-auth"
        value={authMode}
        onChange={(e) => setAuthMode(e.target.value as typeof authMode)}
      >
        <option value="token">Bearer token</option>
        <option value="url_token">Token in the URL</option>
        <option value="signature">Signature</option>
      </select>
      {authMode === 'signature' && (
        <>
          <label htmlFor="webhook-scheme">Signature scheme</label>
          <select id="webhook-scheme" value={scheme} onChange={(e) => setScheme(e.target.value)}>
            {schemes.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </>
      )}
      <div className="actions">
        <button type="submit" className="primary">
          Create webhook
        </button>
      </div>
      <ErrorMessage error={error} />
    </form>
  );
}

function Secret({ hook, what }: { hook: Schemas['WebhookWithSecret']; what: string }) {
  return (
    <div role="status" aria-label={`${what} webhook`}>
      <Notice>
        {what} <strong>{hook.name}</strong>. The secret is shown only now: copy it.
      </Notice>
      <ShownOnce label="URL" value={hook.url} />
      {hook.secret && <ShownOnce label="Secret" value={hook.secret} />}
    </div>
  );
}

function TestFilter({
  factoryUid,
  hook,
  delivery,
  automations,
}: {
  factoryUid: string;
  hook: Webhook;
  delivery: Delivery;
  automations: string[];
}) {
  const [chosen, setAutomation] = useState<string>();
  const automation = chosen ?? automations[0] ?? '';
  const [filter, setFilter] = useState('');
  const [result, setResult] = useState<Schemas['TestWebhookFilterResponse']>();
  const [error, setError] = useState<unknown>();
  async function submit(event: FormEvent) {
    event.preventDefault();
    setError(undefined);
    setResult(undefined);
    try {
      const body: Schemas['TestWebhookFilterRequest'] = filter.trim()
        ? { filter: JSON.parse(filter) as Schemas['WebhookTriggerFilter'] }
        : { automation: automation || undefined };
      setResult(
        await data(
          api.POST('/factory/{factoryUid}/webhooks/{uid}/deliveries/{id}/test-filter', {
            params: { path: { factoryUid, uid: hook.uid, id: delivery.id } },
            body,
          }),
        ),
      );
    } catch (failure) {
      setError(failure);
    }
  }
  return (
    <form className="stack" onSubmit={submit} aria-label="Test filter">
      <h4>Test filter against this delivery</h4>
      <label htmlFor="test-automation">Automation</label>
      <select
        id="test-automation"
        value={automation}
        onChange={(e) => setAutomation(e.target.value)}
      >
        {automations.length === 0 && <option value="">No automations</option>}
        {automations.map((name) => (
          <option key={name} value={name}>
            {name}
          </option>
        ))}
      </select>
      <label htmlFor="test-filter-json">Or a filter (JSON), instead of the automation's</label>
      <textarea
        id="test-filter-json"
        rows={3}
        placeholder={`{"webhook_ids": ["${hook.uid}"], "payload": {"event": ["deploy"]}}`}
        value={filter}
        onChange={(e) => setFilter(e.target.value)}
      />
      <div className="actions">
        <button type="submit">Run test filter</button>
      </div>
      {result && (
        <div role="status" aria-label="Test filter result">
          <p>
            <strong className={result.would_trigger ? 'status-accepted badge' : 'badge'}>
              {result.result}
            </strong>
          </p>
          {result.triggers.length > 0 && <Json value={result.triggers} summary="Show triggers" />}
        </div>
      )}
      <ErrorMessage error={error} />
    </form>
  );
}

/** Evaluates the stored payload again against today's automations, as a new log entry. */
function Redeliver({
  factoryUid,
  hook,
  delivery,
  onRedelivered,
}: {
  factoryUid: string;
  hook: Webhook;
  delivery: Delivery;
  onRedelivered: (entry: Delivery) => void;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  async function redeliver() {
    setBusy(true);
    setError(undefined);
    try {
      onRedelivered(
        await data(
          api.POST('/factory/{factoryUid}/webhooks/{uid}/deliveries/{id}/redeliver', {
            params: { path: { factoryUid, uid: hook.uid, id: delivery.id } },
          }),
        ),
      );
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  }
  return (
    <div className="stack">
      <div className="actions">
        <button type="button" onClick={() => void redeliver()} disabled={busy}>
          Redeliver
        </button>
        <span className="muted">
          Runs the payload through the automations as they are now, as a new delivery.
        </span>
      </div>
      <ErrorMessage error={error} />
    </div>
  );
}

/** Automations whose run the delivery could not start (e.g. their model is not enabled). */
function refusedRuns(delivery: Delivery): number {
  return (delivery.runs ?? []).filter((run) => !run.run_id).length;
}

/** What each matching automation did: the run it started, or the reason it could not. */
function RunOutcomes({ delivery }: { delivery: Delivery }) {
  const runs = delivery.runs ?? [];
  if (!delivery.evaluated_at) return <p className="muted">Evaluating the automations…</p>;
  if (runs.length === 0) return <p className="muted">No automation matched this delivery.</p>;
  return (
    <>
      <h4>Runs</h4>
      <ul className="plain" aria-label="Run outcomes">
        {runs.map((run) => (
          <li key={run.automation}>
            <strong>{run.automation}</strong>:{' '}
            {run.run_id ? (
              <Link to={`/runs/${encodeURIComponent(run.run_id)}`}>{run.run_id}</Link>
            ) : (
              <span className="error-text">
                no run started: {run.error ?? 'the run could not be created'}
              </span>
            )}
          </li>
        ))}
      </ul>
    </>
  );
}

function DeliveryDetail({
  factoryUid,
  hook,
  delivery,
  automations,
  onRedelivered,
}: {
  factoryUid: string;
  hook: Webhook;
  delivery: Delivery;
  automations: string[];
  onRedelivered: (entry: Delivery) => void;
}) {
  const payload = useLoad(
    () =>
      delivery.status === 'Accepted'
        ? data(
            api.GET('/factory/{factoryUid}/webhooks/{uid}/deliveries/{id}/payload', {
              params: { path: { factoryUid, uid: hook.uid, id: delivery.id } },
            }),
          )
        : Promise.resolve(undefined),
    [delivery.id],
  );
  return (
    <section aria-label="Delivery" className="panel">
      <h3>Delivery {delivery.delivery_id ?? delivery.id}</h3>
      {delivery.redelivery_of && (
        <p className="muted">Redelivery of log entry {delivery.redelivery_of}.</p>
      )}
      {delivery.status === 'Accepted' ? (
        <>
          <RunOutcomes delivery={delivery} />
          <Redeliver
            key={delivery.id}
            factoryUid={factoryUid}
            hook={hook}
            delivery={delivery}
            onRedelivered={onRedelivered}
          />
          <h4>Payload</h4>
          <ErrorMessage error={payload.error} />
          {payload.value !== undefined && <Json value={payload.value} summary="Show payload" />}
          <TestFilter
            key={delivery.id}
            factoryUid={factoryUid}
            hook={hook}
            delivery={delivery}
            automations={automations}
          />
        </>
      ) : (
        <p className="muted">Only accepted deliveries keep their payload.</p>
      )}
    </section>
  );
}

function Deliveries({
  factoryUid,
  hook,
  automations,
  linkedDelivery,
}: {
  factoryUid: string;
  hook: Webhook;
  automations: string[];
  linkedDelivery?: string;
}) {
  const [chosen, setSelected] = useState<string>();
  const [redelivered, setRedelivered] = useState<Delivery>();
  const log = useLoad(
    () =>
      data(
        api.GET('/factory/{factoryUid}/webhooks/{uid}/deliveries', {
          params: { path: { factoryUid, uid: hook.uid }, query: { limit: 50 } },
        }),
      ),
    [hook.uid],
  );
  useInterval(log.reload, 3000);
  const deliveries = log.value?.deliveries ?? [];
  const selected =
    chosen ?? deliveries.find((d) => linkedDelivery && d.delivery_id === linkedDelivery)?.id;
  const current =
    deliveries.find((d) => d.id === selected) ??
    (redelivered?.id === selected ? redelivered : undefined);
  function showRedelivery(entry: Delivery) {
    setRedelivered(entry);
    setSelected(entry.id);
    log.reload();
  }
  return (
    <>
      <h3>Delivery log</h3>
      <ErrorMessage error={log.error} />
      {redelivered && (
        <Notice>
          Redelivered as <code>{redelivered.delivery_id}</code>: it is in the log below.
        </Notice>
      )}
      <DataTable
        label="Deliveries"
        rows={deliveries}
        rowKey={(delivery) => delivery.id}
        selected={selected ?? ''}
        columns={[
          {
            key: 'received',
            header: 'Received',
            cell: (delivery) => <RelativeTime value={delivery.received_at} />,
          },
          {
            key: 'delivery',
            header: 'Delivery id',
            cell: (delivery) => (
              <>
                <code>{delivery.delivery_id ?? '—'}</code>
                {delivery.redelivery_of && <span className="muted"> (redelivery)</span>}
              </>
            ),
          },
          {
            key: 'status',
            header: 'Status',
            cell: (delivery) => (
              <>
                <span className={`badge status-${delivery.status.split(' ')[0].toLowerCase()}`}>
                  {delivery.status}
                </span>
                {refusedRuns(delivery) > 0 && (
                  <span className="badge state-failed">
                    {refusedRuns(delivery) === 1
                      ? 'Run refused'
                      : `${refusedRuns(delivery)} runs refused`}
                  </span>
                )}
              </>
            ),
          },
          { key: 'size', header: 'Size', cell: (delivery) => `${delivery.size_bytes} B` },
          {
            key: 'runs',
            header: 'Runs started',
            cell: (delivery) => (
              <>
                {(delivery.runs ?? []).map((run) => (
                  <div key={`${run.automation}-${run.run_id}`}>
                    {run.automation}:{' '}
                    {run.run_id ? (
                      <Link to={`/runs/${encodeURIComponent(run.run_id)}`}>{run.run_id}</Link>
                    ) : (
                      <span className="error-text">{run.error ?? 'no run'}</span>
                    )}
                  </div>
                ))}
                {delivery.status === 'Accepted' && !delivery.evaluated_at && (
                  <span className="muted">evaluating…</span>
                )}
              </>
            ),
          },
          {
            key: 'actions',
            header: 'Actions',
            hiddenHeader: true,
            cell: (delivery) => (
              <button type="button" onClick={() => setSelected(delivery.id)}>
                Details
              </button>
            ),
          },
        ]}
        empty={
          <p className="muted">
            No deliveries yet: send a request to the webhook&apos;s URL (above) and it shows up here
            within seconds.
          </p>
        }
      />
      {current && (
        <DeliveryDetail
          factoryUid={factoryUid}
          hook={hook}
          delivery={current}
          automations={automations}
          onRedelivered={showRedelivery}
        />
      )}
    </>
  );
}

function useAutomations({ factoryUid }: { factoryUid: string }) {
  const list = useLoad(
    () => data(api.GET('/factory/{uid}/automations', { params: { path: { uid: factoryUid } } })),
    [factoryUid],
  );
  return { list, names: list.value?.automations.map((a) => a.name) ?? [] };
}

function FactoryPanel({ factory }: { factory: Schemas['Factory'] }) {
  const factoryUid = factory.uid;
  const query = useRoute().query;
  const hooks = useLoad(
    () => data(api.GET('/factory/{factoryUid}/webhooks', { params: { path: { factoryUid } } })),
    [factoryUid],
  );
  const automations = useAutomations({ factoryUid });
  // Automations change with the factory definition (a git push, a PUT): keep the list current.
  useInterval(automations.list.reload, 5000);
  const [shown, setShown] = useState<{ hook: Schemas['WebhookWithSecret']; what: string }>();
  // A run's trigger link (?webhook=<uid>&delivery=<id>) opens that webhook and delivery.
  const [selected, setSelected] = useState(query.get('webhook') ?? undefined);
  const [error, setError] = useState<unknown>();
  const current = hooks.value?.webhooks.find((hook) => hook.uid === selected);

  async function act(hook: Webhook, action: 'enable' | 'disable' | 'rotate' | 'delete') {
    setError(undefined);
    const path = { params: { path: { factoryUid, uid: hook.uid } } };
    try {
      if (action === 'enable')
        await data(api.POST('/factory/{factoryUid}/webhooks/{uid}/enable', path));
      if (action === 'disable')
        await data(api.POST('/factory/{factoryUid}/webhooks/{uid}/disable', path));
      if (action === 'delete') {
        await data(api.DELETE('/factory/{factoryUid}/webhooks/{uid}', path));
        setSelected(undefined);
      }
      if (action === 'rotate') {
        const rotated = await data(
          api.POST('/factory/{factoryUid}/webhooks/{uid}/rotate-secret', path),
        );
        setShown({ hook: rotated, what: 'Rotated the secret of' });
      }
      hooks.reload();
    } catch (failure) {
      setError(failure);
    }
  }

  return (
    <div>
      <h2>Webhooks</h2>
      <ErrorMessage error={hooks.error ?? error} />
      {shown && <Secret hook={shown.hook} what={shown.what} />}
      {hooks.value && (
        <DataTable
          label="Webhooks"
          rows={hooks.value.webhooks}
          rowKey={(hook) => hook.uid}
          selected={selected ?? ''}
          columns={[
            { key: 'name', header: 'Name', cell: (hook) => hook.name },
            {
              key: 'auth',
              header: 'Auth',
              cell: (hook) =>
                `${authModeLabel(hook.auth_mode)}${hook.signature_scheme ? ` (${hook.signature_scheme})` : ''}`,
            },
            { key: 'enabled', header: 'Enabled', cell: (hook) => (hook.enabled ? 'yes' : 'no') },
            { key: 'url', header: 'URL', cell: (hook) => <code>{hook.url}</code> },
            {
              key: 'open',
              header: 'Select',
              hiddenHeader: true,
              cell: (hook) => (
                <button
                  type="button"
                  onClick={() => setSelected(hook.uid)}
                  aria-label={`Open webhook ${hook.name}`}
                >
                  Open
                </button>
              ),
            },
          ]}
          empty={
            <p className="muted">
              No webhooks in this factory yet: open <em>New webhook</em> below to get a URL that
              starts its automations.
            </p>
          }
        />
      )}
      <details>
        <summary>New webhook</summary>
        <NewWebhook
          factoryUid={factoryUid}
          onCreated={(hook) => {
            setShown({ hook, what: 'Created' });
            setSelected(hook.uid);
            hooks.reload();
          }}
        />
      </details>
      {current && (
        <section aria-label={`Webhook ${current.name}`}>
          <h3>{current.name}</h3>
          <div className="actions">
            <button
              type="button"
              onClick={() => act(current, current.enabled ? 'disable' : 'enable')}
            >
              {current.enabled ? 'Disable' : 'Enable'}
            </button>
            <ConfirmButton
              label="Rotate secret"
              question="Rotate the secret? Senders using the old one are refused (after the grace period)."
              confirm="Rotate"
              onConfirm={() => act(current, 'rotate')}
            />
            <ConfirmButton
              label="Delete webhook"
              question={`Delete the webhook ${current.name}? Its URL stops accepting deliveries.`}
              confirm="Delete"
              className="danger"
              onConfirm={() => act(current, 'delete')}
            />
          </div>
          <Deliveries
            factoryUid={factoryUid}
            hook={current}
            automations={automations.names}
            linkedDelivery={query.get('delivery') ?? undefined}
          />
        </section>
      )}
      <Automations
        factory={factory}
        webhooks={hooks.value?.webhooks ?? []}
        automations={automations.list.value?.automations}
        error={automations.list.error}
        onChanged={automations.list.reload}
      />
    </div>
  );
}

export function WebhooksPage() {
  const factories = useLoad(() => data(api.GET('/factory')), []);
  const [selected, setSelected] = useState(useRoute().query.get('factory') ?? undefined);
  const list = factories.value?.factories ?? [];
  const current = list.find((factory) => factory.uid === selected) ?? list[0];
  return (
    <section>
      <h1>Webhooks</h1>
      <div className="columns">
        <div>
          <h2>Factories</h2>
          <ErrorMessage error={factories.error} />
          <ul className="plain choice-list">
            {factories.value?.factories.map((factory) => (
              <li key={factory.uid}>
                <button
                  type="button"
                  aria-pressed={factory.uid === current?.uid}
                  onClick={() => setSelected(factory.uid)}
                >
                  {factory.name}
                </button>
              </li>
            ))}
          </ul>
          <NewFactory
            onCreated={(uid) => {
              setSelected(uid);
              factories.reload();
            }}
          />
        </div>
        {current ? (
          <FactoryPanel key={current.uid} factory={current} />
        ) : (
          factories.value && (
            <p className="empty-state">
              <strong>No factory yet.</strong> A factory holds webhooks and the automations they
              start: create one with a name on the left.
            </p>
          )
        )}
      </div>
    </section>
  );
}
