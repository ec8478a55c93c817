import { useEffect, useState, type FormEvent } from 'react';
import { api, data } from '../api/client';
import { ErrorMessage, parseMetadata, useLoad } from '../components/ui';
import { navigate } from '../router';
import {
  defaultModelEnabled,
  initialModel,
  modelUnavailableReason,
  type ModelAvailability,
} from '../api/models';
import { RefusalNotice, useRefusal } from '../components/access';

export function modelLabel(
  model: { display_name: string; id: string } & ModelAvailability,
): string {
  const base = `${model.display_name} (${model.id})`;
  const reason = modelUnavailableReason(model);
  return reason ? `${base} — unavailable: ${reason}` : base;
}

/** The model and environment pickers of the run and schedule forms. */
export function useRunChoices() {
  const models = useLoad(() => data(api.GET('/agent/models')), []);
  const environments = useLoad(() => data(api.GET('/agent/environments')), []);
  return { models, environments };
}

export function ModelSelect({
  id,
  value,
  onChange,
  choices,
}: {
  id: string;
  value: string;
  onChange: (value: string) => void;
  choices: ReturnType<typeof useRunChoices>;
}) {
  const list = choices.models.value;
  const usableDefault = !list || defaultModelEnabled(list);
  return (
    <select id={id} value={value} onChange={(event) => onChange(event.target.value)}>
      <option value="" disabled={!usableDefault}>
        Default{list ? ` (${list.default_model_id})` : ''}
        {usableDefault ? '' : ' — unavailable'}
      </option>
      {list?.models.map((model) => (
        <option key={model.id} value={model.id} disabled={model.disabled}>
          {modelLabel(model)}
        </option>
      ))}
    </select>
  );
}

export function EnvironmentSelect({
  id,
  value,
  onChange,
  choices,
}: {
  id: string;
  value: string;
  onChange: (value: string) => void;
  choices: ReturnType<typeof useRunChoices>;
}) {
  return (
    <select id={id} value={value} onChange={(event) => onChange(event.target.value)}>
      <option value="">None</option>
      {choices.environments.value?.environments.map((environment) => (
        <option key={environment.uid} value={environment.uid}>
          {environment.config.name ?? environment.uid}
        </option>
      ))}
    </select>
  );
}

export function NewRunPage() {
  const choices = useRunChoices();
  const [prompt, setPrompt] = useState('');
  const [model, setModel] = useState('');
  const [environment, setEnvironment] = useState('');
  const [title, setTitle] = useState('');
  const [metadata, setMetadata] = useState('');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const list = choices.models.value;
  // Never starts on a model that cannot run: a disabled default gives way to an enabled model.
  useEffect(() => {
    if (list) setModel((current) => current || initialModel(list));
  }, [list]);
  const noModel = list !== undefined && list.models.every((m) => m.disabled);
  const refusal = useRefusal('runs.create', 'start runs');

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const created = await data(
        api.POST('/agent/runs', {
          body: {
            prompt,
            title: title || undefined,
            metadata: parseMetadata(metadata),
            config:
              model || environment
                ? { model_id: model || undefined, environment_id: environment || undefined }
                : undefined,
          },
        }),
      );
      navigate(`/runs/${encodeURIComponent(created.run_id)}`);
    } catch (failure) {
      setError(failure);
      setBusy(false);
    }
  }

  const unavailable = choices.models.value?.models.filter((m) => m.disabled) ?? [];
  return (
    <section>
      <h1>New run</h1>
      <RefusalNotice refusal={refusal} />
      <form className="stack" onSubmit={submit} aria-label="New run">
        <fieldset className="bare" disabled={refusal !== null}>
          <label htmlFor="run-prompt">Prompt</label>
          <textarea
            id="run-prompt"
            required
            rows={6}
            value={prompt}
            onChange={(event) => setPrompt(event.target.value)}
          />
          <label htmlFor="run-model">Model</label>
          <ModelSelect id="run-model" value={model} onChange={setModel} choices={choices} />
          {noModel && (
            <p className="hint" role="alert">
              No model is enabled, so no run can start: set a provider key (e.g. OPENAI_API_KEY) for
              the server, or enable the local model in config/models.yaml (README, &ldquo;First run
              in 5 minutes&rdquo;), then restart Ambient.
            </p>
          )}
          {unavailable.length > 0 && (
            <ul className="hint" aria-label="Unavailable models">
              {unavailable.map((m) => (
                <li key={m.id}>{modelLabel(m)}</li>
              ))}
            </ul>
          )}
          <label htmlFor="run-environment">Environment</label>
          <EnvironmentSelect
            id="run-environment"
            value={environment}
            onChange={setEnvironment}
            choices={choices}
          />
          <label htmlFor="run-title">Title (optional)</label>
          <input id="run-title" value={title} onChange={(event) => setTitle(event.target.value)} />
          <label htmlFor="run-metadata">Metadata (optional, one key=value a line)</label>
          <textarea
            id="run-metadata"
            rows={3}
            value={metadata}
            onChange={(event) => setMetadata(event.target.value)}
          />
          <ErrorMessage error={error ?? choices.models.error} />
          <div className="actions">
            <button type="submit" className="primary" disabled={busy || noModel}>
              Start run
            </button>
          </div>
        </fieldset>
      </form>
    </section>
  );
}
