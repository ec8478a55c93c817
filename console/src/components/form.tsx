import type { ReactNode } from 'react';

/** The non-empty, trimmed lines of a textarea (one item a line). */
export function linesOf(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
}

interface FieldProps {
  id: string;
  label: string;
  value: string;
  onChange: (value: string) => void;
  hint?: ReactNode;
}

function Hint({ id, hint }: { id: string; hint?: ReactNode }) {
  return hint ? (
    <p className="hint" id={`${id}-hint`}>
      {hint}
    </p>
  ) : null;
}

/** A labelled input of a `.stack` form. */
export function TextField({
  id,
  label,
  value,
  onChange,
  hint,
  ...input
}: FieldProps & {
  type?: 'text' | 'number' | 'datetime-local' | 'url';
  required?: boolean;
  placeholder?: string;
  min?: number;
  step?: number | 'any';
}) {
  return (
    <>
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        value={value}
        onChange={(event) => onChange(event.target.value)}
        aria-describedby={hint ? `${id}-hint` : undefined}
        {...input}
      />
      <Hint id={id} hint={hint} />
    </>
  );
}

/** A labelled textarea of a `.stack` form. */
export function TextArea({
  id,
  label,
  value,
  onChange,
  hint,
  rows = 3,
  placeholder,
  required,
}: FieldProps & { rows?: number; placeholder?: string; required?: boolean }) {
  return (
    <>
      <label htmlFor={id}>{label}</label>
      <textarea
        id={id}
        rows={rows}
        value={value}
        placeholder={placeholder}
        required={required}
        onChange={(event) => onChange(event.target.value)}
        aria-describedby={hint ? `${id}-hint` : undefined}
      />
      <Hint id={id} hint={hint} />
    </>
  );
}

/** A labelled select of a `.stack` form. */
export function SelectField({
  id,
  label,
  value,
  onChange,
  hint,
  options,
}: FieldProps & { options: readonly { value: string; label: string }[] }) {
  return (
    <>
      <label htmlFor={id}>{label}</label>
      <select
        id={id}
        value={value}
        onChange={(event) => onChange(event.target.value)}
        aria-describedby={hint ? `${id}-hint` : undefined}
      >
        {options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
      <Hint id={id} hint={hint} />
    </>
  );
}
