import { useState, type FormEvent, type ReactNode } from 'react';
import { ConfirmButton, ErrorMessage, ShownOnce } from './ui';
import { RelativeTime, Time } from './time';
import { DataTable, type Column } from './table';
import { TextField } from './form';

/** What API keys of people and of agent identities have in common. */
export interface KeyRow {
  id: string;
  name: string;
  prefix: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  expires_at?: string | null;
}

function KeyStatus({ apiKey, onRevoke }: { apiKey: KeyRow; onRevoke: (key: KeyRow) => void }) {
  if (apiKey.revoked_at) {
    return (
      <span className="badge state-cancelled" title={new Date(apiKey.revoked_at).toLocaleString()}>
        revoked
      </span>
    );
  }
  const expired = apiKey.expires_at && new Date(apiKey.expires_at) <= new Date();
  return (
    <>
      {expired ? (
        <span className="badge state-failed">expired</span>
      ) : (
        <span className="badge state-succeeded">active</span>
      )}{' '}
      <ConfirmButton
        label={`Revoke ${apiKey.name}`}
        question={`Revoke the key ${apiKey.name}? Every request with it is refused from now on.`}
        confirm="Revoke"
        className="danger"
        onConfirm={() => onRevoke(apiKey)}
      />
    </>
  );
}

/**
 * A table of API keys: name, the `extra` columns (a role …), prefix, created, last used, expiry
 * (when the keys have one) and status with a revoke button.
 */
export function KeysTable<K extends KeyRow>({
  label,
  keys,
  extra = [],
  withExpiry = false,
  onRevoke,
  selected,
}: {
  label: string;
  keys: K[];
  extra?: Column<K>[];
  withExpiry?: boolean;
  onRevoke: (key: K) => void;
  /** The id of the key to mark (a link to it). */
  selected?: string;
}) {
  const columns: Column<K>[] = [
    { key: 'name', header: 'Name', primary: true, cell: (key) => key.name },
    ...extra,
    { key: 'prefix', header: 'Prefix', cell: (key) => <code>{key.prefix}</code> },
    { key: 'created', header: 'Created', cell: (key) => <Time value={key.created_at} /> },
    { key: 'used', header: 'Last used', cell: (key) => <RelativeTime value={key.last_used_at} /> },
    ...(withExpiry
      ? [{ key: 'expires', header: 'Expires', cell: (key: K) => <Time value={key.expires_at} /> }]
      : []),
    {
      key: 'status',
      header: 'Status',
      cell: (key) => <KeyStatus apiKey={key} onRevoke={(k) => onRevoke(k as K)} />,
    },
  ];
  return (
    <DataTable
      label={label}
      rows={keys}
      columns={columns}
      rowKey={(key) => key.id}
      selected={selected}
      empty={<p className="muted">No keys yet: create one below.</p>}
    />
  );
}

/** A key just created: shown once, with a copy button, until Done. */
export function NewKeyShown({ value, onDone }: { value: string; onDone: () => void }) {
  return (
    <div role="status" className="panel">
      <p>
        <strong>The key is shown only now: copy it, you will not see it again.</strong> Only its
        prefix is kept to recognise it.
      </p>
      <ShownOnce label="API key" value={value} />
      <div className="actions">
        <button type="button" onClick={onDone}>
          Done
        </button>
      </div>
    </div>
  );
}

/** A form creating a named key: `create` gets the name; the `children` add fields (a role …). */
export function CreateKeyForm({
  id,
  title,
  label = 'Key name',
  create,
  children,
  disabled = false,
}: {
  id: string;
  title?: string;
  label?: string;
  create: (name: string) => Promise<void>;
  children?: ReactNode;
  /** The caller may not create keys (the reason is said above the form). */
  disabled?: boolean;
}) {
  const [name, setName] = useState('');
  const [error, setError] = useState<unknown>();
  async function submit(event: FormEvent) {
    event.preventDefault();
    setError(undefined);
    try {
      await create(name);
      setName('');
    } catch (failure) {
      setError(failure);
    }
  }
  return (
    <form className="stack" onSubmit={submit} aria-label={title ?? 'New key'}>
      {title && <h2>{title}</h2>}
      <fieldset className="bare" disabled={disabled}>
        <TextField id={id} label={label} required value={name} onChange={setName} />
        {children}
        <div className="actions">
          <button type="submit" className="primary">
            Create key
          </button>
        </div>
      </fieldset>
      <ErrorMessage error={error} />
    </form>
  );
}
