import { useState, type FormEvent } from 'react';
import { api, data, type Schemas } from '../api/client';
import { ErrorMessage, Time, useLoad } from '../components/ui';

type Environment = Schemas['Environment'];

function EnvironmentForm({
  environment,
  onSaved,
}: {
  environment?: Environment;
  onSaved: () => void;
}) {
  const config = environment?.config;
  const [name, setName] = useState(config?.name ?? '');
  const [description, setDescription] = useState(config?.description ?? '');
  const [image, setImage] = useState(config?.docker_image ?? '');
  const [setup, setSetup] = useState((config?.setup_commands ?? []).join('\n'));
  const [network, setNetwork] = useState<'none' | 'egress'>(config?.network ?? 'none');
  const [error, setError] = useState<unknown>();

  async function submit(event: FormEvent) {
    event.preventDefault();
    setError(undefined);
    const body = {
      name,
      description: description || null,
      docker_image: image || undefined,
      setup_commands: setup
        .split('\n')
        .map((line) => line.trim())
        .filter(Boolean),
      network,
    };
    try {
      if (environment) {
        await data(
          api.PATCH('/agent/environments/{uid}', {
            params: { path: { uid: environment.uid } },
            body,
          }),
        );
      } else {
        await data(api.POST('/agent/environments', { body }));
      }
      onSaved();
    } catch (failure) {
      setError(failure);
    }
  }

  const id = environment ? `env-${environment.uid}` : 'env-new';
  return (
    <form
      className="stack"
      onSubmit={submit}
      aria-label={environment ? `Edit ${name}` : 'New environment'}
    >
      <label htmlFor={`${id}-name`}>Name</label>
      <input id={`${id}-name`} required value={name} onChange={(e) => setName(e.target.value)} />
      <label htmlFor={`${id}-description`}>Description</label>
      <input
        id={`${id}-description`}
        value={description}
        onChange={(e) => setDescription(e.target.value)}
      />
      <label htmlFor={`${id}-image`}>Docker image</label>
      <input id={`${id}-image`} value={image} onChange={(e) => setImage(e.target.value)} />
      <label htmlFor={`${id}-setup`}>Setup commands (one a line)</label>
      <textarea
        id={`${id}-setup`}
        rows={3}
        value={setup}
        onChange={(e) => setSetup(e.target.value)}
      />
      <label htmlFor={`${id}-network`}>Network</label>
      <select
        id={`${id}-network`}
        value={network}
        onChange={(e) => setNetwork(e.target.value as 'none' | 'egress')}
      >
        <option value="none">none</option>
        <option value="egress">egress</option>
      </select>
      <div className="actions">
        <button type="submit" className="primary">
          {environment ? 'Save environment' : 'Create environment'}
        </button>
      </div>
      <ErrorMessage error={error} />
    </form>
  );
}

export function EnvironmentsPage() {
  const list = useLoad(() => data(api.GET('/agent/environments')), []);
  const [editing, setEditing] = useState<Environment | 'new'>();
  return (
    <section>
      <div className="page-head">
        <h1>Environments</h1>
        <button type="button" className="primary" onClick={() => setEditing('new')}>
          New environment
        </button>
      </div>
      <ErrorMessage error={list.error} />
      {editing && (
        <div className="panel">
          <EnvironmentForm
            key={editing === 'new' ? 'new' : editing.uid}
            environment={editing === 'new' ? undefined : editing}
            onSaved={() => {
              setEditing(undefined);
              list.reload();
            }}
          />
          <button type="button" onClick={() => setEditing(undefined)}>
            Close
          </button>
        </div>
      )}
      {list.value && list.value.environments.length > 0 ? (
        <div className="table-wrap">
          <table aria-label="Environments">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Image</th>
                <th scope="col">Network</th>
                <th scope="col">Setup</th>
                <th scope="col">Updated</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.value.environments.map((environment) => (
                <tr key={environment.uid}>
                  <td>{environment.config.name}</td>
                  <td>
                    <code>{environment.config.docker_image ?? 'default'}</code>
                  </td>
                  <td>{environment.config.network ?? 'none'}</td>
                  <td>
                    {environment.setup_failed ? (
                      <span className="error-text">failed</span>
                    ) : (
                      `${environment.config.setup_commands.length} commands`
                    )}
                  </td>
                  <td>
                    <Time value={environment.last_updated} />
                  </td>
                  <td>
                    <button
                      type="button"
                      aria-label={`Edit ${environment.config.name}`}
                      onClick={() => setEditing(environment)}
                    >
                      Edit
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : (
        <p className="muted">No environments.</p>
      )}
    </section>
  );
}
