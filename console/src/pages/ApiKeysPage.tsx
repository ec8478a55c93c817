import { useState } from 'react';
import { api, ApiError, data, type Schemas } from '../api/client';
import { ErrorMessage, Notice, useLoad } from '../components/ui';
import { CreateKeyForm, KeysTable, NewKeyShown } from '../components/keys';
import { SelectField, TextField } from '../components/form';
import { useRoute } from '../router';

type ApiKey = Schemas['ApiKey'];
type Role = ApiKey['role'];

const ROLES: { value: Role; label: string }[] = [
  { value: 'viewer', label: 'viewer (read only)' },
  { value: 'member', label: 'member (runs, schedules, environments)' },
  { value: 'admin', label: 'admin (everything, keys included)' },
];

/** The team's API keys of people (admins only): list, create (shown once), revoke. */
export function ApiKeysPage() {
  const list = useLoad(() => data(api.GET('/api-keys')), []);
  const [created, setCreated] = useState<Schemas['CreatedApiKey']>();
  const [role, setRole] = useState<Role>('member');
  const [expires, setExpires] = useState('');
  const [error, setError] = useState<unknown>();
  // A link to one key (?key=<id>, from the audit log) marks its row.
  const linked = useRoute().query.get('key') ?? undefined;

  async function revoke(key: ApiKey) {
    setError(undefined);
    try {
      await data(api.DELETE('/api-keys/{id}', { params: { path: { id: key.id } } }));
      list.reload();
    } catch (failure) {
      setError(failure);
    }
  }

  async function create(name: string) {
    // datetime-local is the browser's local time; the API takes RFC 3339.
    const expiresAt = expires ? new Date(expires).toISOString() : undefined;
    setCreated(await data(api.POST('/api-keys', { body: { name, role, expires_at: expiresAt } })));
    setExpires('');
    list.reload();
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
      {created && <NewKeyShown value={created.key} onDone={() => setCreated(undefined)} />}
      {list.value && (
        <>
          <KeysTable
            label="API keys"
            keys={list.value.api_keys}
            extra={[{ key: 'role', header: 'Role', cell: (key) => key.role }]}
            withExpiry
            selected={linked}
            onRevoke={(key) => void revoke(key)}
          />
          <CreateKeyForm id="api-key-name" title="New key" create={create}>
            <SelectField
              id="api-key-role"
              label="Role"
              value={role}
              onChange={(value) => setRole(value as Role)}
              options={ROLES}
            />
            <TextField
              id="api-key-expires"
              label="Expires (optional)"
              type="datetime-local"
              value={expires}
              onChange={setExpires}
            />
          </CreateKeyForm>
        </>
      )}
    </section>
  );
}
