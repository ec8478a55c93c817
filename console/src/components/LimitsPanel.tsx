import { useState, type FormEvent } from 'react';
import { api, data, type Schemas } from '../api/client';
import { formatUsd } from '../format/money';
import { useCaller } from './access';
import { TextField } from './form';
import { ErrorMessage, Notice, useLoad } from './ui';

type Limits = Schemas['Limits'];
type LimitName = keyof Limits;

const FIELDS: { name: LimitName; label: string; usd: boolean; hint: string }[] = [
  {
    name: 'max_concurrent_runs',
    label: 'Runs at once',
    usd: false,
    hint: 'Further runs wait, queued, and start in order as runs end.',
  },
  {
    name: 'monthly_budget_usd',
    label: 'Monthly budget (USD)',
    usd: true,
    hint: 'Inference at the model catalogue’s prices per UTC month; once it is spent, new runs fail (budget exceeded).',
  },
  {
    name: 'max_run_cost_usd',
    label: 'Cost cap per run (USD)',
    usd: true,
    hint: 'A run reaching it stops at its next model call.',
  },
];

function shown(value: number | null, usd: boolean): string {
  if (value === null) return 'No limit';
  return usd ? formatUsd(value) : String(value);
}

type Draft = Record<LimitName, string>;

function draftOf(limits: Limits): Draft {
  const text = (value: number | null) => (value === null ? '' : String(value));
  return {
    max_concurrent_runs: text(limits.max_concurrent_runs),
    monthly_budget_usd: text(limits.monthly_budget_usd),
    max_run_cost_usd: text(limits.max_run_cost_usd),
  };
}

/** The team's limits; admins edit them (an empty field is no limit); `onSaved` after a change. */
export function LimitsPanel({ onSaved }: { onSaved?: () => void }) {
  const me = useCaller();
  const limits = useLoad(() => data(api.GET('/limits')), []);
  const [draft, setDraft] = useState<Draft | null>(null);
  const [saveError, setSaveError] = useState<unknown>();
  const [saved, setSaved] = useState(false);
  const isAdmin = me?.role === 'admin';

  async function save(event: FormEvent) {
    event.preventDefault();
    if (!draft) return;
    const number = (text: string) => (text.trim() === '' ? null : Number(text));
    try {
      const updated = await data(
        api.PUT('/limits', {
          body: {
            max_concurrent_runs: number(draft.max_concurrent_runs),
            monthly_budget_usd: number(draft.monthly_budget_usd),
            max_run_cost_usd: number(draft.max_run_cost_usd),
          },
        }),
      );
      limits.setValue(updated);
      setDraft(null);
      setSaveError(undefined);
      setSaved(true);
      onSaved?.();
    } catch (failure) {
      setSaveError(failure);
    }
  }

  return (
    <section aria-label="Limits">
      <h2>Limits</h2>
      <ErrorMessage error={limits.error} />
      {saved && <Notice>Limits saved.</Notice>}
      {limits.value && !draft && (
        <>
          <dl className="facts" data-testid="limits">
            {FIELDS.map(({ name, label, usd }) => [
              <dt key={`${name}-label`}>{label}</dt>,
              <dd key={name} data-testid={`limit-${name}`}>
                {shown(limits.value![name], usd)}
              </dd>,
            ])}
          </dl>
          {isAdmin ? (
            <button
              type="button"
              onClick={() => {
                setSaved(false);
                setDraft(draftOf(limits.value!));
              }}
            >
              Edit limits
            </button>
          ) : (
            <p className="hint">Admins can change these limits.</p>
          )}
        </>
      )}
      {draft && (
        <form className="stack" onSubmit={save} aria-label="Edit limits">
          {FIELDS.map(({ name, label, usd, hint }) => (
            <TextField
              key={name}
              id={`limit-input-${name}`}
              label={label}
              type="number"
              min={0}
              step={usd ? 'any' : 1}
              placeholder="No limit"
              value={draft[name]}
              onChange={(value) => setDraft({ ...draft, [name]: value })}
              hint={hint}
            />
          ))}
          <ErrorMessage error={saveError} />
          <div>
            <button type="submit">Save limits</button>{' '}
            <button type="button" onClick={() => setDraft(null)}>
              Cancel
            </button>
          </div>
        </form>
      )}
    </section>
  );
}
