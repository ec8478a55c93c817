import { AsyncLocalStorage } from 'node:async_hooks';

/** Fields every log line written in the current async context carries (request_id, run_id). */
export type LogBindings = Readonly<Record<string, string | number>>;

const storage = new AsyncLocalStorage<LogBindings>();

/** Runs `fn` with `bindings` added to those of the caller's context, for every line it logs. */
export function withLogBindings<T>(bindings: LogBindings, fn: () => T): T {
  const outer = storage.getStore();
  return storage.run(outer ? { ...outer, ...bindings } : bindings, fn);
}

/** The bindings of the current async context (undefined outside any). */
export function currentLogBindings(): LogBindings | undefined {
  return storage.getStore();
}
