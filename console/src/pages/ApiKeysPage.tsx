import { useState, type FormEvent } from 'react';
import { api, ApiError, data, type Schemas } from '../api/client';
import { ConfirmButton, ErrorMessage, Notice, ShownOnce, Time, useLoad } from '../components/ui';

type ApiKey = Schemas['ApiKey'];
type Role = ApiKey['role'];

const ROLES: { role: Role; what: string }[] = [
  { role: 'viewer', what: 'read only' },
  { role: 'member', what: 'runs, schedules, environments' },
  { role: 'admin', what: 'everything, keys included' },
];

function CreateKeyForm({ onCreated }: { onCreated: (key: Schemas['CreatedApiKey']) => void }) {
  const [name, setName] = useState('');
  const [role, setRole] = useState<Role>('member');
  const [expires, setExpires] = useState('');
  const [error, setError] = useState<unknown>();

  async function create(event: FormEvent) {
    event.preventDefault();
    setError(undefined);
    try {
      // datetime-local is the browser's local time; the API takes RFC 3339.
      const expiresAt = expires ? new Date(expires).toISOString() : undefined;
      onCreated(await data(api.POST('/api-keys', { body: { name, role, expires_at: expiresAt } })));
      setName('');
      setExpires('');
    } catch (failure) {
      setError(failure);
    }
  }

  return (
    <form className="stack" onSubmit={create} aria-label="New API key">
      <h2>New key</h2>
      <label htmlFor="api-key-name">Key name</label>
      <input id="api-key-name" required value={name} onChange={(e) => setName(e.target.value)} />
      <label htmlFor="api-key-role">Role</label>
      <select id="api-key-role" value={role} onChange={(e) => setRole(e.target.value as Role)}>
        {ROLES.map(({ role: value, what }) => (
          <option key={value} value={value}>
            {value} ({what})
          </option>
        ))}
      </select>
      <label htmlFor="api-key-expires">Expires (optional)</label>
      <input
        id="api-key-expires"
        type="datetime-local"
        value={expires}
        onChange={(e) => setExpires(e.target.value)}
      />
      <div className="actions">
        <button type="submit" className="primary">
          Create key
        </button>
      </div>
      <ErrorMessage error={error} />
    </form>
  );
}

function Status({ apiKey }: { apiKey: ApiKey }) {
  if (apiKey.revoked_at) return <span className="badge state-cancelled">revoked</span>;
  if (apiKey.expires_at && new Date(apiKey.expires_at) <= new Date()) {
    return <span className="badge state-failed">expired</span>;
  }
  return <span className="badge state-succeeded">active</span>;
}

function KeysTable({ keys, onRevoke }: { keys: ApiKey[]; onRevoke: (key: ApiKey) => void }) {
  if (keys.length === 0) return <p className="muted">No keys.</p>;
  return (
    <div className="table-wrap">
      <table aria-label="API keys">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Role</th>
            <th scope="col">Prefix</th>
            <th scope="col">Created</th>
            <th scope="col">Last used</th>
            <th scope="col">Expires</th>
            <th scope="col">Status</th>
          </tr>
        </thead>
        <tbody>
          {keys.map((key) => (
            <tr key={key.id}>
              <td>{key.name}</td>
              <td>{key.role}</td>
              <td>
                <code>{key.prefix}</code>
              </td>
              <td>
                <Time value={key.created_at} />
              </td>
              <td>
                <Time value={key.last_used_at} />
              </td>
              <td>
                <Time value={key.expires_at} />
              </td>
              <td>
                <Status apiKey={key} />{' '}
                {!key.revoked_at && (
                  <ConfirmButton
                    label={`Revoke ${key.name}`}
                    question={`Revoke the key ${key.name}? Every request with it is refused from now on.`}
                    confirm="Revoke"
                    className="danger"
                    onConfirm={() => onRevoke(key)}
                  />
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The team's API keys of people (admins only): list, create (shown once), revoke. */
export function ApiKeysPage() {
  const list = useLoad(() => data(api.GET('/api-keys')), []);
  const [created, setCreated] = useState<Schemas['CreatedApiKey']>();
  const [error, setError] = useState<unknown>();

  async function revoke(key: ApiKey) {
    setError(undefined);
    try {
      await data(api.DELETE('/api-keys/{id}', { params: { path: { id: key.id } } }));
      list.reload();
    } catch (failure) {
      setError(failure);
    }
  }

  if (list.error instanceof ApiError && list.error.status === 403) {
    return (
      <section>
        <h1>API keys</h1>
        <Notice>
          Only an admin can see and manage the team&apos;s API keys; the key you signed in with may
          not ({list.error.message}).
        </Notice>
      </section>
    );
  }

  return (
    <section>
      <h1>API keys</h1>
      <ErrorMessage error={list.error ?? error} />
      {created && (
        <div role="status" className="panel">
          <p>
            <strong>Copy the key now: you will not see it again.</strong> Only its prefix is kept to
            recognise it.
          </p>
          <ShownOnce label="API key" value={created.key} />
          <div className="actions">
            <button type="button" onClick={() => setCreated(undefined)}>
              Done
            </button>
          </div>
        </div>
      )}
      {list.value && (
        <>
          <KeysTable keys={list.value.api_keys} onRevoke={(key) => void revoke(key)} />
          <CreateKeyForm
            onCreated={(key) => {
              setCreated(key);
              list.reload();
            }}
          />
        </>
      )}
    </section>
  );
}
