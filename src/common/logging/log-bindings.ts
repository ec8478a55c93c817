import { AsyncLocalStorage } from 'node:async_hooks';
import { currentRequest, type RequestContext } from '../request-context';

/** Fields every log line written in the current async context carries (request_id, run_id). */
export type LogBindings = Readonly<Record<string, string | number>>;

const storage = new AsyncLocalStorage<LogBindings>();

/**
 * An HTTP request's own binding (its request_id) comes from the request context, so that a
 * request needs one async context, not two; made once per request.
 */
const requestBindings = new WeakMap<RequestContext, LogBindings>();

/** Runs `fn` with `bindings` added to those of the caller's context, for every line it logs. */
export function withLogBindings<T>(bindings: LogBindings, fn: () => T): T {
  const outer = currentLogBindings();
  return storage.run(outer ? { ...outer, ...bindings } : bindings, fn);
}

/** The bindings of the current async context (undefined outside any). */
export function currentLogBindings(): LogBindings | undefined {
  const own = storage.getStore();
  if (own) return own;
  const request = currentRequest();
  if (!request) return undefined;
  let bindings = requestBindings.get(request);
  if (!bindings) requestBindings.set(request, (bindings = { request_id: request.requestId }));
  return bindings;
}
