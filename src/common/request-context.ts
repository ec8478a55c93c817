import { AsyncLocalStorage } from 'node:async_hooks';

/** What the code serving an HTTP request may want to know about it beyond its arguments. */
export interface RequestContext {
  requestId: string;
  /** The caller's address as the socket (or Express's `trust proxy` setting) sees it. */
  ip: string | null;
}

const storage = new AsyncLocalStorage<RequestContext>();

/** Runs `fn` (the rest of the request's pipeline) with `context` as the current request's. */
export function withRequestContext<T>(context: RequestContext, fn: () => T): T {
  return storage.run(context, fn);
}

/** The request being served in the current async context (undefined outside any). */
export function currentRequest(): RequestContext | undefined {
  return storage.getStore();
}
