import { useState, type FormEvent } from 'react';
import { api, data, type Schemas } from '../api/client';
import { ConfirmButton, ErrorMessage, ShownOnce, Time, useLoad } from '../components/ui';

type Agent = Schemas['AgentResponse'];

function Keys({ agent }: { agent: Agent }) {
  const keys = useLoad(
    () =>
      data(api.GET('/agent/identities/{uid}/api-keys', { params: { path: { uid: agent.uid } } })),
    [agent.uid],
  );
  const [name, setName] = useState('');
  const [created, setCreated] = useState<Schemas['CreatedAgentApiKey']>();
  const [error, setError] = useState<unknown>();

  async function create(event: FormEvent) {
    event.preventDefault();
    setError(undefined);
    try {
      setCreated(
        await data(
          api.POST('/agent/identities/{uid}/api-keys', {
            params: { path: { uid: agent.uid } },
            body: { name },
          }),
        ),
      );
      setName('');
      keys.reload();
    } catch (failure) {
      setError(failure);
    }
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
      {created && (
        <div role="status">
          <p>The key is shown only now: copy it.</p>
          <ShownOnce label="API key" value={created.key} />
        </div>
      )}
      <ErrorMessage error={keys.error ?? error} />
      {keys.value && keys.value.api_keys.length > 0 ? (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Prefix</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">Status</th>
              </tr>
            </thead>
            <tbody>
              {keys.value.api_keys.map((key) => (
                <tr key={key.id}>
                  <td>{key.name}</td>
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
                    {key.revoked_at ? (
                      <>
                        revoked <Time value={key.revoked_at} />
                      </>
                    ) : (
                      <ConfirmButton
                        label={`Revoke ${key.name}`}
                        question={`Revoke the key ${key.name}? Requests with it are refused.`}
                        confirm="Revoke"
                        className="danger"
                        onConfirm={() => revoke(key.id)}
                      />
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : (
        <p className="muted">No keys.</p>
      )}
      <form className="stack" onSubmit={create}>
        <label htmlFor="key-name">New key name</label>
        <input id="key-name" required value={name} onChange={(e) => setName(e.target.value)} />
        <div className="actions">
          <button type="submit">Create key</button>
        </div>
      </form>
    </section>
  );
}

export function IdentitiesPage() {
  const list = useLoad(() => data(api.GET('/agent/identities')), []);
  const [name, setName] = useState('');
  const [selected, setSelected] = useState<string>();
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
      {list.value && list.value.agents.length > 0 ? (
        <div className="table-wrap">
          <table aria-label="Identities">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Available</th>
                <th scope="col">Model</th>
                <th scope="col">Updated</th>
                <th scope="col">Keys</th>
              </tr>
            </thead>
            <tbody>
              {list.value.agents.map((agent) => (
                <tr key={agent.uid}>
                  <td>{agent.name}</td>
                  <td>{agent.available ? 'yes' : 'no'}</td>
                  <td>{agent.base_model ?? '—'}</td>
                  <td>
                    <Time value={agent.updated_at} />
                  </td>
                  <td>
                    <button
                      type="button"
                      aria-label={`Keys of ${agent.name}`}
                      onClick={() => setSelected(agent.uid)}
                    >
                      Keys
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : (
        <p className="muted">No identities.</p>
      )}
      <form className="stack" onSubmit={create}>
        <label htmlFor="identity-name">New identity name</label>
        <input id="identity-name" required value={name} onChange={(e) => setName(e.target.value)} />
        <div className="actions">
          <button type="submit">Create identity</button>
        </div>
      </form>
      {current && <Keys key={current.uid} agent={current} />}
    </section>
  );
}
