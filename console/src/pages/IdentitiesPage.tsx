import { useState, type FormEvent } from 'react';
import { api, data, type Schemas } from '../api/client';
import { ErrorMessage, useLoad } from '../components/ui';
import { DataTable } from '../components/table';
import { RelativeTime } from '../components/time';
import { CreateKeyForm, KeysTable, NewKeyShown } from '../components/keys';
import { RefusalNotice, useRefusal } from '../components/access';
import { useRoute } from '../router';

type Agent = Schemas['AgentResponse'];

function Keys({ agent, refusal }: { agent: Agent; refusal: string | null }) {
  const keys = useLoad(
    () =>
      data(api.GET('/agent/identities/{uid}/api-keys', { params: { path: { uid: agent.uid } } })),
    [agent.uid],
  );
  const [created, setCreated] = useState<Schemas['CreatedAgentApiKey']>();
  const [error, setError] = useState<unknown>();

  async function create(name: string) {
    setCreated(
      await data(
        api.POST('/agent/identities/{uid}/api-keys', {
          params: { path: { uid: agent.uid } },
          body: { name },
        }),
      ),
    );
    keys.reload();
  }

  async function revoke(keyId: string) {
    setError(undefined);
    try {
      await data(
        api.DELETE('/agent/identities/{uid}/api-keys/{keyId}', {
          params: { path: { uid: agent.uid, keyId } },
        }),
      );
      keys.reload();
    } catch (failure) {
      setError(failure);
    }
  }

  return (
    <section aria-label={`Keys of ${agent.name}`}>
      <h3>API keys of {agent.name}</h3>
      {created && <NewKeyShown value={created.key} onDone={() => setCreated(undefined)} />}
      <ErrorMessage error={keys.error ?? error} />
      {keys.value && (
        <KeysTable
          label={`API keys of ${agent.name}`}
          keys={keys.value.api_keys}
          onRevoke={(key) => void revoke(key.id)}
        />
      )}
      <CreateKeyForm
        id="key-name"
        label="New key name"
        create={create}
        disabled={refusal !== null}
      />
    </section>
  );
}

export function IdentitiesPage() {
  const list = useLoad(() => data(api.GET('/agent/identities')), []);
  const [name, setName] = useState('');
  // A link to one identity (?identity=<uid>, from the audit log) opens its keys.
  const [selected, setSelected] = useState(useRoute().query.get('identity') ?? undefined);
  const refusal = useRefusal('agents.write', 'create identities or their keys');
  const [error, setError] = useState<unknown>();
  const current = list.value?.agents.find((agent) => agent.uid === selected);

  async function create(event: FormEvent) {
    event.preventDefault();
    setError(undefined);
    try {
      const created = await data(api.POST('/agent/identities', { body: { name } }));
      setName('');
      setSelected(created.uid);
      list.reload();
    } catch (failure) {
      setError(failure);
    }
  }

  return (
    <section>
      <h1>Identities</h1>
      <ErrorMessage error={list.error ?? error} />
      {list.value && (
        <DataTable
          label="Identities"
          rows={list.value.agents}
          rowKey={(agent) => agent.uid}
          selected={selected ?? ''}
          columns={[
            { key: 'name', header: 'Name', primary: true, cell: (agent) => agent.name },
            { key: 'available', header: 'Available', cell: (a) => (a.available ? 'yes' : 'no') },
            { key: 'model', header: 'Model', cell: (agent) => agent.base_model ?? '—' },
            {
              key: 'updated',
              header: 'Updated',
              cell: (a) => <RelativeTime value={a.updated_at} />,
            },
            {
              key: 'keys',
              header: 'Keys',
              cell: (agent) => (
                <button
                  type="button"
                  aria-label={`Keys of ${agent.name}`}
                  onClick={() => setSelected(agent.uid)}
                >
                  Keys
                </button>
              ),
            },
          ]}
          empty={
            <p>
              <strong>No identities yet.</strong> An identity is an agent with keys of its own, for
              runs started by another system: create one below.
            </p>
          }
        />
      )}
      <RefusalNotice refusal={refusal} />
      <form className="stack" onSubmit={create} aria-label="New identity">
        <fieldset className="bare" disabled={refusal !== null}>
          <label htmlFor="identity-name">New identity name</label>
          <input
            id="identity-name"
            required
            value={name}
            onChange={(e) => setName(e.target.value)}
          />
          <div className="actions">
            <button type="submit">Create identity</button>
          </div>
        </fieldset>
      </form>
      {current && <Keys key={current.uid} agent={current} refusal={refusal} />}
    </section>
  );
}
