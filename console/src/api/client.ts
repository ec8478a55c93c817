import createClient from 'openapi-fetch';
import type { components, paths } from './schema';
import { csrfToken, storedKey } from './session';

export type Schemas = components['schemas'];
export const API_BASE = '/api/v1';

/** Called on any 401: the console goes back to sign-in with this message. */
let unauthorized: (message: string) => void = () => undefined;
export function onUnauthorized(handler: (message: string) => void): void {
  unauthorized = handler;
}

/**
 * Says why the console signs out: by what the refused request sent (a key, or the session
 * cookie), not by what is stored now, which the first of several refusals already cleared.
 */
export function onUnauthorizedNotify(sentKey: boolean): void {
  unauthorized(
    sentKey
      ? 'The API key is no longer accepted (revoked or expired): sign in again with a valid key.'
      : 'Your session has ended: sign in again.',
  );
}

/** What a call that changes state needs when signed in by SSO: the session's CSRF token. */
export function csrfHeaders(method: string): Record<string, string> {
  const token = ['GET', 'HEAD'].includes(method.toUpperCase()) ? null : csrfToken();
  return token ? { 'x-csrf-token': token } : {};
}

export function authHeaders(): Record<string, string> {
  const key = storedKey();
  return key ? { Authorization: `Bearer ${key}` } : {};
}

/**
 * A random UUID (v4). `crypto.randomUUID` exists only in secure contexts (https, localhost);
 * `getRandomValues` everywhere, so a console served over plain http on a LAN works too.
 */
export function randomUuid(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The typed client of Ambient's REST API (types generated from its own OpenAPI document). */
export const api = createClient<paths>({ baseUrl: API_BASE });
api.use({
  onRequest({ request }) {
    const headers = { ...authHeaders(), ...csrfHeaders(request.method) };
    for (const [name, value] of Object.entries(headers)) request.headers.set(name, value);
    // Each POST is one user action (a click): its own key, so a request the server did but
    // whose answer was lost is not done twice if it is sent again.
    if (request.method === 'POST' && !request.headers.has('Idempotency-Key')) {
      request.headers.set('Idempotency-Key', randomUuid());
    }
    return request;
  },
  onResponse({ request, response }) {
    if (response.status === 401) onUnauthorizedNotify(request.headers.has('Authorization'));
    return response;
  },
});

/** The title of the server's 404 for a run's content the retention deleted (not "nothing yet"). */
export const RUN_CONTENT_DELETED_TITLE = 'Run content deleted';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** The Oz Error's title, which tells apart answers of one status (a deleted run's content). */
    readonly title?: string,
  ) {
    super(message);
  }
}

function titleOf(error: unknown): string | undefined {
  const title = error && typeof error === 'object' ? (error as { title?: unknown }).title : null;
  return typeof title === 'string' ? title : undefined;
}

function messageOf(status: number, error: unknown): string {
  if (error && typeof error === 'object') {
    const problem = error as Partial<Schemas['Error']>;
    const text = problem.detail ?? problem.error ?? problem.title;
    if (text) return `${status}: ${text}`;
  }
  if (typeof error === 'string' && error) return `${status}: ${error}`;
  return `The request failed (${status}).`;
}

/** The data of an openapi-fetch answer, or an ApiError carrying the Oz Error's message. */
export async function data<T>(
  call: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<T> {
  const { data: body, error, response } = await call;
  if (!response.ok || error !== undefined)
    throw new ApiError(response.status, messageOf(response.status, error), titleOf(error));
  return body as T;
}

export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Saves a Blob the browser fetched (downloads need the Authorization header). */
export function saveBlob(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
