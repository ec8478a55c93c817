import { useState, type FormEvent } from 'react';

/** One filter of a FilterBar; `advanced` ones are folded behind "More filters". */
export interface FilterField<K extends string> {
  name: K;
  label: string;
  type?: 'text' | 'search' | 'select' | 'datetime';
  options?: readonly { value: string; label: string }[];
  placeholder?: string;
  advanced?: boolean;
}

export type FilterValues<K extends string> = Record<K, string>;

/** A datetime-local value (the browser's local time) as RFC 3339 for the API. */
export const isoOf = (local: string) => (local ? new Date(local).toISOString() : undefined);

/**
 * A compact filter form: the common filters in one row, the rest behind a toggle that says how
 * many of them are set. Apply submits the draft; Clear goes back to no filters.
 */
export function FilterBar<K extends string>({
  label,
  idPrefix,
  fields,
  empty,
  onApply,
}: {
  label: string;
  idPrefix: string;
  fields: readonly FilterField<K>[];
  empty: FilterValues<K>;
  onApply: (values: FilterValues<K>) => void;
}) {
  const [draft, setDraft] = useState(empty);
  const [open, setOpen] = useState(false);
  const advanced = fields.filter((field) => field.advanced);
  const advancedSet = advanced.filter((field) => draft[field.name]).length;

  function submit(event: FormEvent) {
    event.preventDefault();
    onApply(draft);
  }

  const input = (field: FilterField<K>) => {
    const id = `${idPrefix}-${field.name}`;
    const common = {
      id,
      value: draft[field.name],
      onChange: (event: { target: { value: string } }) =>
        setDraft({ ...draft, [field.name]: event.target.value }),
    };
    return (
      <div key={field.name} className="filter-field">
        <label htmlFor={id}>{field.label}</label>
        {field.type === 'select' ? (
          <select {...common}>
            <option value="">Any</option>
            {field.options?.map((option) => (
              <option key={option.value} value={option.value}>
                {option.label}
              </option>
            ))}
          </select>
        ) : (
          <input
            type={field.type === 'datetime' ? 'datetime-local' : (field.type ?? 'text')}
            placeholder={field.placeholder}
            {...common}
          />
        )}
      </div>
    );
  };

  return (
    <form className="filters" onSubmit={submit} aria-label={label}>
      <div className="filter-row">
        {fields.filter((field) => !field.advanced).map(input)}
        <div className="filter-actions">
          <button type="submit">Apply</button>
          <button
            type="button"
            onClick={() => {
              setDraft(empty);
              onApply(empty);
            }}
          >
            Clear
          </button>
          {advanced.length > 0 && (
            <button
              type="button"
              aria-expanded={open}
              aria-controls={`${idPrefix}-advanced`}
              onClick={() => setOpen(!open)}
            >
              {open ? 'Fewer filters' : 'More filters'}
              {advancedSet > 0 ? ` (${advancedSet})` : ''}
            </button>
          )}
        </div>
      </div>
      {open && (
        <div className="filter-row advanced" id={`${idPrefix}-advanced`}>
          {advanced.map(input)}
        </div>
      )}
    </form>
  );
}
