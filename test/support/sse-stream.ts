import { request as httpRequest, IncomingMessage } from 'node:http';
import { SseEvent, SseParser } from '../../src/common/sse';

/** An open `text/event-stream` response, read as it arrives. */
export interface SseStream {
  status: number;
  headers: IncomingMessage['headers'];
  events: SseEvent[];
  comments: string[];
  /** The next event (after those already taken) that `accept` holds for; earlier ones are skipped. */
  next(accept?: (event: SseEvent) => boolean, what?: string): Promise<SseEvent>;
  /** Every event from the last one taken up to and including the first that `accept` holds for. */
  until(accept: (event: SseEvent) => boolean, what?: string): Promise<SseEvent[]>;
  /** Resolves with the first comment matching `pattern`. */
  comment(pattern: RegExp): Promise<string>;
  /** Resolves when the server ends the response. */
  ended: Promise<void>;
  close(): void;
}

/** A failed answer (before any stream): its status and parsed body. */
export interface SseRefusal {
  status: number;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
}

const DEADLINE_MS = 30_000;

/**
 * GETs an SSE endpoint with a key or a session cookie (and a Last-Event-ID) and parses events as they come; waiting
 * for an event has a deadline so a missing one fails the test with what did arrive.
 */
export function openSse(
  url: string,
  options: { apiKey?: string; cookie?: string; lastEventId?: string } = {},
): Promise<SseStream | SseRefusal> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { Accept: 'text/event-stream' };
    if (options.apiKey) headers.Authorization = `Bearer ${options.apiKey}`;
    if (options.cookie) headers.Cookie = options.cookie;
    if (options.lastEventId !== undefined) headers['Last-Event-ID'] = options.lastEventId;
    const req = httpRequest(url, { headers }, (res) => {
      res.setEncoding('utf8');
      if (res.statusCode !== 200) {
        let text = '';
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(text) }),
        );
        return;
      }
      resolve(readStream(res, () => req.destroy()));
    });
    req.on('error', reject);
    req.end();
  });
}

function readStream(res: IncomingMessage, destroy: () => void): SseStream {
  const events: SseEvent[] = [];
  const comments: string[] = [];
  let taken = 0;
  let done = false;
  const wakers = new Set<() => void>();
  const wake = () => wakers.forEach((w) => w());
  const parser = new SseParser(
    (event) => {
      events.push(event);
      wake();
    },
    (text) => {
      comments.push(text);
      wake();
    },
  );
  res.on('data', (chunk: string) => parser.push(chunk));
  const ended = new Promise<void>((resolve) => {
    res.on('close', () => {
      done = true;
      wake();
      resolve();
    });
  });

  /** Waits until `check` returns a value, the stream ends, or the deadline passes. */
  const waitUntil = <T>(check: () => T | undefined, what: string): Promise<T> =>
    new Promise((resolve, reject) => {
      const attempt = () => {
        const value = check();
        if (value !== undefined) return finish(() => resolve(value));
        if (done) finish(() => reject(new Error(`stream ended before ${what}; got ${dump()}`)));
      };
      const timer = setTimeout(
        () => finish(() => reject(new Error(`no ${what} within ${DEADLINE_MS} ms; got ${dump()}`))),
        DEADLINE_MS,
      );
      const finish = (settle: () => void) => {
        clearTimeout(timer);
        wakers.delete(attempt);
        settle();
      };
      wakers.add(attempt);
      attempt();
    });
  const dump = () => JSON.stringify(events.map((e) => `${e.event} ${e.id} ${e.data.slice(0, 80)}`));

  const until = (accept: (event: SseEvent) => boolean, what = 'the event') =>
    waitUntil(() => {
      const index = events.findIndex((e, i) => i >= taken && accept(e));
      if (index === -1) return undefined;
      const slice = events.slice(taken, index + 1);
      taken = index + 1;
      return slice;
    }, what);

  return {
    status: res.statusCode ?? 0,
    headers: res.headers,
    events,
    comments,
    next: async (accept = () => true, what) => (await until(accept, what)).at(-1)!,
    until,
    comment: (pattern) =>
      waitUntil(() => comments.find((c) => pattern.test(c)), `a comment matching ${pattern}`),
    ended,
    close: destroy,
  };
}

export function isStream(value: SseStream | SseRefusal): value is SseStream {
  return 'events' in value;
}
