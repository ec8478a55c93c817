import { Worker } from 'node:worker_threads';

export interface SearchFile {
  relative: string;
  absolute: string;
}

export interface RegexSearchOptions {
  files: SearchFile[];
  pattern: string;
  limit: number;
  maxFileBytes: number;
  maxLineChars: number;
  timeoutMs: number;
  signal: AbortSignal;
}

export type RegexSearchResult =
  { matches: string[]; more: boolean } | { timedOut: true } | { aborted: true };

/**
 * The matching loop, run in a worker thread: a model-supplied regular expression can backtrack
 * for minutes, and it must not block the worker process's event loop while it does.
 */
const SEARCH_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { readFileSync, statSync } = require('node:fs');
const { files, pattern, limit, maxFileBytes, maxLineChars } = workerData;
const regexp = new RegExp(pattern);
const matches = [];
let more = false;
outer: for (const file of files) {
  let bytes;
  try {
    if (statSync(file.absolute).size > maxFileBytes) continue;
    bytes = readFileSync(file.absolute);
  } catch {
    continue;
  }
  if (bytes.subarray(0, 8192).includes(0)) continue;
  const lines = bytes.toString('utf8').split('\\n');
  for (let i = 0; i < lines.length; i++) {
    if (!regexp.test(lines[i])) continue;
    if (matches.length === limit) { more = true; break outer; }
    matches.push(file.relative + ':' + (i + 1) + ': ' + lines[i].slice(0, maxLineChars));
  }
}
parentPort.postMessage({ matches, more });
`;

/** Searches `files` line by line; stops the thread at the timeout or when `signal` aborts. */
export function regexSearch(options: RegexSearchOptions): Promise<RegexSearchResult> {
  const { signal, timeoutMs, ...workerData } = options;
  if (signal.aborted) return Promise.resolve({ aborted: true });
  const worker = new Worker(SEARCH_SOURCE, { eval: true, workerData });
  return new Promise<RegexSearchResult>((resolve, reject) => {
    const finish = (result: RegexSearchResult | Error): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      void worker.terminate();
      if (result instanceof Error) reject(result);
      else resolve(result);
    };
    const onAbort = (): void => finish({ aborted: true });
    const timer = setTimeout(() => finish({ timedOut: true }), timeoutMs);
    signal.addEventListener('abort', onAbort, { once: true });
    worker.once('message', (result: RegexSearchResult) => finish(result));
    worker.once('error', (err) => finish(err));
  });
}
