import { Worker } from 'node:worker_threads';

export interface SearchFile {
  relative: string;
  absolute: string;
}

export interface RegexSearchOptions {
  /** The workspace's real path: a file whose opened descriptor lies elsewhere is skipped. */
  root: string;
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
 * Each file is opened first (never following a final symlink, never blocking on a FIFO), and
 * read only when the opened descriptor is a regular file inside the workspace: a process in the
 * sandbox that swaps a directory of the path for a symlink to a host directory after the walk
 * gets the file skipped, not the host file searched.
 */
const SEARCH_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { closeSync, constants, fstatSync, openSync, readlinkSync, readSync } = require('node:fs');
const { root, files, pattern, limit, maxFileBytes, maxLineChars } = workerData;
const rootPrefix = root.endsWith('/') ? root : root + '/';
const flags = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
function readInside(absolute) {
  const fd = openSync(absolute, flags);
  try {
    const real = readlinkSync('/proc/self/fd/' + fd);
    if (real !== root && !real.startsWith(rootPrefix)) return undefined;
    const info = fstatSync(fd);
    if (!info.isFile() || info.size > maxFileBytes) return undefined;
    const bytes = Buffer.alloc(info.size);
    let filled = 0;
    while (filled < bytes.length) {
      const read = readSync(fd, bytes, filled, bytes.length - filled, null);
      if (read === 0) break;
      filled += read;
    }
    return bytes.subarray(0, filled);
  } finally {
    closeSync(fd);
  }
}
const regexp = new RegExp(pattern);
const matches = [];
let more = false;
outer: for (const file of files) {
  let bytes;
  try {
    bytes = readInside(file.absolute);
  } catch {
    continue;
  }
  if (!bytes) continue;
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
