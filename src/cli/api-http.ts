import type { CliIo, OptionValues } from './cli-command';
import { CommandError, UsageError } from './cli-errors';

/** Options every API-backed command takes. */
export const API_OPTIONS = {
  url: { type: 'string' },
  key: { type: 'string' },
} as const;

export const API_OPTION_HELP = [
  '  --url <base>    API base URL (default $AMBIENT_API_URL, else AMBIENT_PUBLIC_URL + /api/v1)',
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

/**
 * Calls the Ambient REST API as the key's user, so the CLI gets exactly the API's validation,
 * permissions and errors (no second implementation against the database).
 */
export async function callApi(
  values: OptionValues,
  io: CliIo,
  method: string,
  path: string,
  body?: unknown,
): Promise<unknown> {
  const { base, key } = apiTarget(values, io);
  let res: Response;
  try {
    res = await fetch(`${base}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    throw new CommandError(`cannot reach the API at ${base} (${(err as Error).message})`);
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
