import { useState, type FormEvent } from 'react';
import { api, data, type Schemas } from '../api/client';
import { ErrorMessage, Json, Notice } from '../components/ui';
import { TextArea, TextField } from '../components/form';
import { RelativeTime } from '../components/time';
import { automationFile, automationPath, fieldsOf, type AutomationFields } from './automation-file';

export type AutomationItem = {
  name: string;
  enabled: boolean;
  execution?: Record<string, unknown> | null;
  prompt?: string;
  triggers: Record<string, unknown>[];
  updated_at: string;
};

const NEW: AutomationFields = {
  name: '',
  enabled: true,
  model: '',
  webhookIds: [],
  payload: '',
  prompt: '',
};

/**
 * Writes one automation into the factory's definition (GET the files, replace or add its
 * automation.md, PUT them all): the API applies a definition atomically and refuses an invalid
 * one with its diagnostics, so a bad automation changes nothing.
 */
async function saveAutomation(
  factoryUid: string,
  fields: AutomationFields,
  isNew: boolean,
): Promise<string[]> {
  const path = automationPath(fields.name);
  const definition = await data(
    api.GET('/factory/{uid}/definition', { params: { path: { uid: factoryUid } } }),
  );
  const existing = definition.files.find((file) => file.path === path);
  if (isNew && existing) throw new Error(`An automation named ${fields.name} exists already.`);
  const files = definition.files.filter((file) => file.path !== path);
  files.push({ path, content: automationFile(fields, existing?.content) });
  const applied = await data(
    api.PUT('/factory/{uid}/definition', {
      params: { path: { uid: factoryUid } },
      body: { files },
    }),
  );
  // What applied but will not work yet (a model that is not enabled), for this automation.
  return applied.warnings.filter((w) => w.path === path).map((w) => w.message);
}

function AutomationForm({
  factoryUid,
  webhooks,
  automation,
  onSaved,
  onClose,
}: {
  factoryUid: string;
  webhooks: Schemas['Webhook'][];
  automation?: AutomationItem;
  onSaved: (name: string, warnings: string[]) => void;
  onClose: () => void;
}) {
  const [fields, setFields] = useState<AutomationFields>(automation ? fieldsOf(automation) : NEW);
  const [error, setError] = useState<unknown>();
  const set = (change: Partial<AutomationFields>) => setFields({ ...fields, ...change });
  const id = automation ? `automation-${automation.name}` : 'automation-new';

  async function submit(event: FormEvent) {
    event.preventDefault();
    setError(undefined);
    if (fields.webhookIds.length === 0) {
      setError(new Error('Pick at least one webhook whose deliveries start this automation.'));
      return;
    }
    try {
      onSaved(fields.name, await saveAutomation(factoryUid, fields, !automation));
    } catch (failure) {
      setError(failure);
    }
  }

  return (
    <form
      className="stack panel"
      onSubmit={submit}
      aria-label={automation ? `Edit automation ${automation.name}` : 'New automation'}
    >
      <h3>{automation ? `Edit ${automation.name}` : 'New automation'}</h3>
      {automation ? null : (
        <TextField
          id={`${id}-name`}
          label="Automation name"
          required
          value={fields.name}
          onChange={(name) => set({ name })}
          hint="Letters, digits, dots, dashes and underscores."
        />
      )}
      <label className="inline">
        <input
          type="checkbox"
          checked={fields.enabled}
          onChange={(event) => set({ enabled: event.target.checked })}
        />
        Enabled
      </label>
      <fieldset>
        <legend>Started by deliveries to</legend>
        {webhooks.length === 0 && (
          <p className="hint">This factory has no webhooks yet: create one above first.</p>
        )}
        {webhooks.map((hook) => (
          <label className="inline" key={hook.uid}>
            <input
              type="checkbox"
              checked={fields.webhookIds.includes(hook.uid)}
              onChange={(event) =>
                set({
                  webhookIds: event.target.checked
                    ? [...fields.webhookIds, hook.uid]
                    : fields.webhookIds.filter((uid) => uid !== hook.uid),
                })
              }
            />
            {hook.name}
          </label>
        ))}
      </fieldset>
      <TextArea
        id={`${id}-payload`}
        label="Payload filter (JSON, optional)"
        placeholder='{"event": ["deploy"]}'
        value={fields.payload}
        onChange={(payload) => set({ payload })}
        hint="Only deliveries whose body matches start a run; empty: every delivery."
      />
      <TextField
        id={`${id}-model`}
        label="Model (optional)"
        value={fields.model}
        onChange={(model) => set({ model })}
        hint="Empty: the factory's default model."
      />
      <TextArea
        id={`${id}-prompt`}
        label="Prompt"
        rows={5}
        required
        value={fields.prompt}
        onChange={(prompt) => set({ prompt })}
        hint="What the agent does with a delivery; the delivery's body is attached to the run."
      />
      <div className="actions">
        <button type="submit" className="primary">
          {automation ? 'Save automation' : 'Create automation'}
        </button>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
      <ErrorMessage error={error} />
    </form>
  );
}

/** A factory's automations: listed; in a managed factory created and edited here too. */
export function Automations({
  factory,
  webhooks,
  automations,
  error,
  onChanged,
}: {
  factory: Schemas['Factory'];
  webhooks: Schemas['Webhook'][];
  automations?: AutomationItem[];
  error: unknown;
  onChanged: () => void;
}) {
  const [editing, setEditing] = useState<AutomationItem | 'new'>();
  const [saved, setSaved] = useState<{ name: string; warnings: string[] }>();
  const managed = factory.definition_source.kind === 'managed';
  const names = new Map(webhooks.map((hook) => [hook.uid, hook.name]));
  return (
    <section aria-label="Automations">
      <div className="page-head">
        <h2>Automations</h2>
        {managed && (
          <button type="button" onClick={() => setEditing('new')}>
            New automation
          </button>
        )}
      </div>
      <ErrorMessage error={error} />
      {saved && <Notice>Saved the automation {saved.name}.</Notice>}
      {saved?.warnings.map((warning) => (
        <p key={warning} className="error" role="alert">
          Warning: {warning}
        </p>
      ))}
      {editing && (
        <AutomationForm
          key={editing === 'new' ? 'new' : editing.name}
          factoryUid={factory.uid}
          webhooks={webhooks}
          automation={editing === 'new' ? undefined : editing}
          onClose={() => setEditing(undefined)}
          onSaved={(name, warnings) => {
            setEditing(undefined);
            setSaved({ name, warnings });
            onChanged();
          }}
        />
      )}
      {automations?.length ? (
        <ul className="plain automations">
          {automations.map((automation) => {
            const ids = fieldsOf(automation).webhookIds;
            return (
              <li key={automation.name}>
                <strong>{automation.name}</strong>{' '}
                <span className={`badge ${automation.enabled ? 'state-succeeded' : ''}`}>
                  {automation.enabled ? 'enabled' : 'disabled'}
                </span>{' '}
                <span className="muted">
                  on {ids.map((uid) => names.get(uid) ?? uid).join(', ') || 'no webhook'} · updated{' '}
                  <RelativeTime value={automation.updated_at} />
                </span>{' '}
                {managed && (
                  <button
                    type="button"
                    aria-label={`Edit automation ${automation.name}`}
                    onClick={() => setEditing(automation)}
                  >
                    Edit
                  </button>
                )}
                <Json value={automation.triggers} summary="Show triggers" />
              </li>
            );
          })}
        </ul>
      ) : (
        <p className="muted">
          No automations yet. An automation starts a run for each delivery to the webhooks it names
          {managed
            ? ': use New automation.'
            : `; this factory's come from its repository (automations/<name>/automation.md).`}
        </p>
      )}
      {!managed && (
        <p className="hint">
          This factory&apos;s definition comes from {factory.definition_source.repository_url}:
          change automations there, then sync.
        </p>
      )}
    </section>
  );
}
