import { randomUuid } from '../api/client';
import { LiveHub } from './live-hub';
import type { FromHub, LiveEventName, LiveStatus, ToHub } from './protocol';

export interface RunWatchHandlers {
  event(event: LiveEventName, data: unknown): void;
  status(status: LiveStatus): void;
  gone(detail: string): void;
  unauthorized(sentKey: boolean): void;
}

interface Transport {
  send(message: ToHub): void;
}

interface ActiveWatch {
  runId: string;
  key: string | null;
  handlers: RunWatchHandlers;
}

const CHANNEL = 'ambient-live';
const LEADER_LOCK = 'ambient-live-leader';

/** This page's watches, by id: what the hub's news are for, and what a new hub is told again. */
const watches = new Map<string, ActiveWatch>();
let transport: Transport | undefined;

/**
 * Watches a run through the browser's one live connection (per sign-in); returns how to stop.
 * `key`: the API key the page is signed in with, null for the SSO session cookie.
 */
export function watchRun(
  runId: string,
  key: string | null,
  handlers: RunWatchHandlers,
): () => void {
  const id = randomUuid();
  watches.set(id, { runId, key, handlers });
  hub().send({ type: 'watch', id, runId, key });
  return () => {
    if (watches.delete(id)) hub().send({ type: 'unwatch', id });
  };
}

function deliver(message: FromHub): void {
  const watch = watches.get(message.id);
  if (!watch) return;
  if (message.type === 'event') watch.handlers.event(message.event, message.data);
  else if (message.type === 'status') watch.handlers.status(message.status);
  else if (message.type === 'gone') watch.handlers.gone(message.detail);
  else watch.handlers.unauthorized(message.sentKey);
}

/** Tells a hub that knows nothing of this page (a new leader, a fallback) every watch again. */
function resend(): void {
  for (const [id, { runId, key }] of watches) hub().send({ type: 'watch', id, runId, key });
}

/**
 * Where the hub runs: a SharedWorker every tab of the browser shares; without one (some mobile
 * browsers), the tab elected by a Web Lock, the others talking to it over a BroadcastChannel;
 * without those either (an insecure context), this page alone.
 */
function hub(): Transport {
  transport ??=
    typeof SharedWorker === 'function'
      ? sharedWorker()
      : typeof BroadcastChannel === 'function' && navigator.locks
        ? elected()
        : local();
  return transport;
}

function sharedWorker(): Transport {
  const worker = new SharedWorker(new URL('./shared-worker.ts', import.meta.url), {
    type: 'module',
    name: 'ambient-live',
  });
  worker.port.onmessage = (message: MessageEvent<FromHub>) => deliver(message.data);
  worker.addEventListener('error', () => {
    // The worker could not start: this page goes on with a hub of its own.
    transport = local();
    resend();
  });
  addEventListener('pagehide', () => worker.port.postMessage({ type: 'detach' } satisfies ToHub));
  addEventListener('pageshow', (event) => {
    if (event.persisted) resend();
  });
  return { send: (message) => worker.port.postMessage(message) };
}

function local(): Transport {
  const receive = new LiveHub().attach({
    // Never inside the caller's own call: a page's handlers run after watchRun returned.
    post: (message) => queueMicrotask(() => deliver(message)),
  });
  return { send: receive };
}

type Envelope =
  | { kind: 'leader' }
  | { kind: 'to-hub'; from: string; message: ToHub }
  | { kind: 'from-hub'; to: string; message: FromHub };

function elected(): Transport {
  const tabId = randomUuid();
  const channel = new BroadcastChannel(CHANNEL);
  let leader: LiveHub | null = null;
  let own: ((message: ToHub) => void) | null = null;
  const followers = new Map<string, (message: ToHub) => void>();
  const follower = (from: string, leading: LiveHub) => {
    let receive = followers.get(from);
    if (!receive) {
      receive = leading.attach({
        post: (message) => channel.postMessage({ kind: 'from-hub', to: from, message }),
      });
      followers.set(from, receive);
    }
    return receive;
  };
  channel.onmessage = ({ data }: MessageEvent<Envelope>) => {
    if (data.kind === 'leader')
      resend(); // a new leader knows no watches
    else if (data.kind === 'from-hub' && data.to === tabId) deliver(data.message);
    else if (data.kind === 'to-hub' && leader) follower(data.from, leader)(data.message);
  };
  // The lock is held for the tab's life; when it closes, the next tab in line leads.
  void navigator.locks.request(LEADER_LOCK, () => {
    leader = new LiveHub();
    own = leader.attach({ post: (message) => queueMicrotask(() => deliver(message)) });
    channel.postMessage({ kind: 'leader' } satisfies Envelope);
    resend();
    return new Promise<never>(() => undefined);
  });
  const send = (message: ToHub) => {
    if (own) own(message);
    else channel.postMessage({ kind: 'to-hub', from: tabId, message } satisfies Envelope);
  };
  addEventListener('pagehide', () => send({ type: 'detach' }));
  return { send };
}
