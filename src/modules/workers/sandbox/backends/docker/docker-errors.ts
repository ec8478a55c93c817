import Dockerode from 'dockerode';
import { SandboxError } from '../../sandbox.types';

/** What the docker daemon's answers (or the lack of one) mean for a sandbox. */

const CONNECTION_ERRORS = new Set([
  'ECONNREFUSED',
  'ENOENT',
  'EACCES',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
]);

export interface DockerApiError extends Error {
  statusCode?: number;
  code?: string;
  json?: { message?: string } | null;
}

export function apiError(error: unknown): DockerApiError {
  return error instanceof Error ? (error as DockerApiError) : new Error(String(error));
}

/** The daemon's own words when it gave some, else the client's. */
export function reason(error: unknown): string {
  const e = apiError(error);
  return (e.json?.message ?? e.message).trim();
}

export function daemonDown(error: unknown): boolean {
  const e = apiError(error);
  return (
    e.statusCode === undefined &&
    (CONNECTION_ERRORS.has(e.code ?? '') || /connect|socket hang up/i.test(e.message))
  );
}

export function unavailable(error: unknown): SandboxError {
  return new SandboxError(
    `the docker daemon does not answer (${reason(error)}): start it (dockerd), give Ambient access ` +
      'to its socket (DOCKER_HOST), or choose another sandbox with AMBIENT_SANDBOX',
    'resource_unavailable',
  );
}

/** Whether a docker daemon answers within `timeoutMs` (for AMBIENT_SANDBOX=auto). */
export async function dockerAnswers(docker?: Dockerode, timeoutMs = 1000): Promise<boolean> {
  const client = docker ?? new Dockerode();
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  try {
    // dockerode passes `abortSignal` on to the request; its typings do not know the option.
    const ping = client.ping.bind(client) as unknown as (options: {
      abortSignal: AbortSignal;
    }) => Promise<unknown>;
    await ping({ abortSignal: abort.signal });
    return true;
  } catch (_error) {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

export function isNotFound(error: unknown): boolean {
  return apiError(error).statusCode === 404;
}
