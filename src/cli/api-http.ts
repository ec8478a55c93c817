import { randomUUID } from 'node:crypto';
import type { CliIo, OptionValues } from './cli-command';
import { CommandError, UsageError } from './cli-errors';

/** Options every API-backed command takes. */
export const API_OPTIONS = {
  url: { type: 'string' },
  key: { type: 'string' },
} as const;

export const API_OPTION_HELP = [
  '  --url <base>    API base URL (default $AMBIENT_API_URL, else the public URL + /api/v1:',
  '                  AMBIENT_PUBLIC_URL, unset = http://localhost:$AMBIENT_PORT)',
  '  --key <key>     API key (default $AMBIENT_API_KEY)',
];

/** The API base URL (…/api/v1, no trailing slash) and key the options and environment name. */
export function apiTarget(values: OptionValues, io: CliIo): { base: string; key: string } {
  const key = (values.key as string | undefined) ?? process.env.AMBIENT_API_KEY;
  if (!key) throw new UsageError('missing --key <api key> (or set AMBIENT_API_KEY)');
  const base = (
    (values.url as string | undefined) ??
    process.env.AMBIENT_API_URL ??
    `${io.config().server.publicUrl.replace(/\/+$/, '')}/api/v1`
  ).replace(/\/+$/, '');
  return { base, key };
}

/** The Oz Error answer's message (`error`), else the body as text. */
export function problemText(status: number, text: string): string {
  const problem = (safeJson(text) ?? {}) as { error?: string };
  return `${status} ${problem.error ?? text}`;
}

/** Attempts of one command's request when the API cannot answer (no answer, 502-504, 409 busy). */
const MAX_ATTEMPTS = 4;
const MAX_RETRY_DELAY_MS = 5000;

/**
 * Calls the Ambient REST API as the key's user, so the CLI gets exactly the API's validation,
 * permissions and errors (no second implementation against the database). A POST carries an
 * `Idempotency-Key` made once per command and sent again on each retry: a request whose answer
 * was lost (the connection broke, a proxy timed out) is retried without doing it twice.
 */
export async function callApi(
  values: OptionValues,
  io: CliIo,
  method: string,
  path: string,
  body?: unknown,
): Promise<unknown> {
  const { base, key } = apiTarget(values, io);
  const headers: Record<string, string> = {
    Authorization: `Bearer ${key}`,
    ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    ...(method === 'POST' ? { 'Idempotency-Key': randomUUID() } : {}),
  };
  // Only a POST carries a key, so only a POST is sent again.
  const retryable = method === 'POST';
  let res: Response | undefined;
  let failure: Error | undefined;
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt += 1) {
    res = undefined;
    failure = undefined;
    try {
      res = await fetch(`${base}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (err) {
      failure = err as Error;
    }
    const delay = retryable && attempt < MAX_ATTEMPTS ? retryDelayMs(res, failure, attempt) : null;
    if (delay === null) break;
    await res?.body?.cancel().catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
  if (!res) {
    throw new CommandError(`cannot reach the API at ${base} (${failure?.message ?? 'no answer'})`);
  }
  const text = await res.text();
  const parsed = text ? (safeJson(text) ?? text) : null;
  if (!res.ok) {
    const problem = (parsed ?? {}) as {
      error?: string;
      diagnostics?: { path: string; line: number; column: number; message: string }[];
    };
    const lines = (problem.diagnostics ?? []).map(
      (d) => `  ${d.path}:${d.line}:${d.column}: ${d.message}`,
    );
    throw new CommandError([`${res.status} ${problem.error ?? text}`, ...lines].join('\n'));
  }
  return parsed;
}

/**
 * How long to wait before sending a request again, or null when its answer stands: no answer
 * at all, a gateway that got none (502-504), or a 409/503 that asks for a retry (Retry-After).
 */
function retryDelayMs(
  res: Response | undefined,
  failure: Error | undefined,
  attempt: number,
): number | null {
  const backoff = Math.min(MAX_RETRY_DELAY_MS, 250 * 2 ** attempt);
  if (failure) return backoff;
  if (!res) return null;
  if ([502, 504].includes(res.status)) return backoff;
  const retryAfter = Number(res.headers.get('retry-after'));
  if ((res.status === 409 || res.status === 503) && Number.isFinite(retryAfter) && retryAfter > 0) {
    return Math.min(MAX_RETRY_DELAY_MS, retryAfter * 1000);
  }
  return null;
}

/** `--json`, which every read command takes. */
export const JSON_OPTION = { json: { type: 'boolean' } } as const;
export const JSON_OPTION_HELP = "  --json          the API's answer as one JSON line";

/** The API's answer as one JSON line with --json, else as `printLines` shows it. */
export function printAnswer<T>(
  values: OptionValues,
  io: CliIo,
  answer: T,
  printLines: (answer: T) => void,
): void {
  if (values.json === true) io.out(JSON.stringify(answer));
  else printLines(answer);
}

/** Prints a response as indented JSON (the first line is what scripts usually want). */
export function printJson(io: CliIo, value: unknown): void {
  if (value !== null && value !== undefined) io.out(JSON.stringify(value, null, 2));
}

export function required(values: OptionValues, option: string): string {
  const value = values[option];
  if (typeof value !== 'string' || value.trim() === '')
    throw new UsageError(`missing --${option} <value>`);
  return value.trim();
}

/** A value from --<option>, or from stdin with --<option>-stdin (keeps secrets out of shell history). */
export async function valueFrom(values: OptionValues, option: string): Promise<string> {
  if (values[`${option}-stdin`] === true) {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks)
      .toString('utf8')
      .replace(/\r?\n$/, '');
  }
  return required(values, option);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
