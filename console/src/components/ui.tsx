import { useEffect, useRef, useState, type ReactNode } from 'react';
import { errorText } from '../api/client';
import { stateLabel } from '../labels';

export function ErrorMessage({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p className="error" role="alert">
      {errorText(error)}
    </p>
  );
}

export function Notice({ children }: { children: ReactNode }) {
  return (
    <p className="notice" role="status">
      {children}
    </p>
  );
}

/** Loads on mount and whenever `deps` change; `reload()` fetches again. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]) {
  const [value, setValue] = useState<T>();
  const [error, setError] = useState<unknown>();
  const [version, setVersion] = useState(0);
  useEffect(() => {
    let current = true;
    load().then(
      (result) => {
        if (!current) return;
        setValue(result);
        setError(undefined);
      },
      (failure: unknown) => current && setError(failure),
    );
    return () => {
      current = false;
    };
  }, [...deps, version]);
  return { value, error, reload: () => setVersion((v) => v + 1), setValue };
}

/** Runs `tick` every `ms` while enabled (auto-refresh). */
export function useInterval(tick: () => void, ms: number, enabled = true) {
  const saved = useRef(tick);
  saved.current = tick;
  useEffect(() => {
    if (!enabled) return;
    const timer = setInterval(() => saved.current(), ms);
    return () => clearInterval(timer);
  }, [ms, enabled]);
}

/** A button that asks first, in a modal <dialog> (focus trapped, Escape cancels). */
export function ConfirmButton({
  label,
  question,
  confirm,
  onConfirm,
  className,
}: {
  label: string;
  question: string;
  confirm: string;
  onConfirm: () => void | Promise<void>;
  className?: string;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  return (
    <>
      <button type="button" className={className} onClick={() => dialog.current?.showModal()}>
        {label}
      </button>
      <dialog ref={dialog} aria-label={label}>
        <form
          method="dialog"
          onSubmit={(event) => {
            const submitter = (event.nativeEvent as SubmitEvent).submitter as HTMLButtonElement;
            if (submitter?.value === 'yes') void onConfirm();
          }}
        >
          <p>{question}</p>
          <div className="actions">
            <button value="no" autoFocus>
              Keep
            </button>
            <button value="yes" className="danger">
              {confirm}
            </button>
          </div>
        </form>
      </dialog>
    </>
  );
}

export function CopyButton({
  text,
  label,
  children = 'Copy',
}: {
  text: string;
  label: string;
  children?: ReactNode;
}) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      onClick={() => {
        // The clipboard may refuse (no permission, page not focused): say so rather than nothing.
        void (navigator.clipboard?.writeText(text) ?? Promise.reject(new Error())).then(
          () => setCopied(true),
          () => window.prompt('Copy with Ctrl+C:', text),
        );
      }}
      aria-label={label}
    >
      {copied ? 'Copied' : children}
    </button>
  );
}

/** A secret shown once, with a copy button and a warning. */
export function ShownOnce({ label, value }: { label: string; value: string }) {
  return (
    <div className="shown-once">
      <span className="label">{label}</span>
      <code>{value}</code>
      <CopyButton text={value} label={`Copy ${label.toLowerCase()}`} />
    </div>
  );
}

export { RelativeTime, Time } from './time';

/** A run's state, readable; the code itself in data-state (and the title) for search and tests. */
export function StateBadge({ state }: { state: string }) {
  return (
    <span className={`badge state-${state.toLowerCase()}`} data-state={state} title={state}>
      {stateLabel(state)}
    </span>
  );
}

/** Pretty JSON, in a <details> when long. */
export function Json({ value, summary = 'Show' }: { value: unknown; summary?: string }) {
  const text = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
  return <Collapsible text={text} summary={summary} />;
}

export function Collapsible({ text, summary }: { text: string; summary: string }) {
  const long = text.length > 600 || text.split('\n').length > 12;
  if (!long) return <pre>{text}</pre>;
  return (
    <details>
      <summary>
        {summary} ({text.split('\n').length} lines)
      </summary>
      <pre>{text}</pre>
    </details>
  );
}

/** key=value lines to a metadata map. */
export function parseMetadata(text: string): Record<string, string> | undefined {
  const entries = text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const at = line.indexOf('=');
      if (at <= 0) throw new Error(`Metadata line "${line}" is not key=value.`);
      return [line.slice(0, at).trim(), line.slice(at + 1).trim()] as const;
    });
  return entries.length ? Object.fromEntries(entries) : undefined;
}

/** Previous / Next over a cursor-paged list: `cursors` is the stack of cursors of the pages read. */
export function CursorPager({
  cursors,
  setCursors,
  pageInfo,
}: {
  cursors: string[];
  setCursors: (cursors: string[]) => void;
  pageInfo?: { has_next_page: boolean; next_cursor?: string };
}) {
  return (
    <nav className="pager" aria-label="Pages">
      <button
        type="button"
        disabled={cursors.length === 0}
        onClick={() => setCursors(cursors.slice(0, -1))}
      >
        Previous page
      </button>
      <button
        type="button"
        disabled={!pageInfo?.has_next_page}
        onClick={() => {
          if (pageInfo?.next_cursor) setCursors([...cursors, pageInfo.next_cursor]);
        }}
      >
        Next page
      </button>
    </nav>
  );
}
