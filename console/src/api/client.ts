import createClient from 'openapi-fetch';
import type { components, paths } from './schema';
import { storedKey } from './session';

export type Schemas = components['schemas'];
export const API_BASE = '/api/v1';

/** Called on any 401: the console goes back to sign-in with this message. */
let unauthorized: (message: string) => void = () => undefined;
export function onUnauthorized(handler: (message: string) => void): void {
  unauthorized = handler;
}

export function onUnauthorizedNotify(): void {
  unauthorized('The API key was refused (401 Unauthorized): sign in again with a valid key.');
}

export function authHeaders(): Record<string, string> {
  const key = storedKey();
  return key ? { Authorization: `Bearer ${key}` } : {};
}

/** The typed client of Ambient's REST API (types generated from its own OpenAPI document). */
export const api = createClient<paths>({ baseUrl: API_BASE });
api.use({
  onRequest({ request }) {
    for (const [name, value] of Object.entries(authHeaders())) request.headers.set(name, value);
    return request;
  },
  onResponse({ response }) {
    if (response.status === 401) onUnauthorizedNotify();
    return response;
  },
});

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
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
    throw new ApiError(response.status, messageOf(response.status, error));
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
