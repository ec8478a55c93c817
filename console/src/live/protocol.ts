/**
 * The messages between a console page and the live hub that holds the browser's one live
 * connection (in a SharedWorker, an elected tab, or the page itself; see live-client.ts).
 */

/** The console's shared stream of runs (console-internal; see docs/console.md). */
export const LIVE_RUNS_PATH = '/api/v1/console/live-runs';

export type LiveEventName = 'run' | 'timeline' | 'message';

/**
 * A page's requests. `watch` names the credential the page is signed in with: its API key, or
 * null for the SSO session cookie; pages signed in differently never share a connection.
 */
export type ToHub =
  | { type: 'watch'; id: string; runId: string; key: string | null }
  | { type: 'unwatch'; id: string }
  | { type: 'detach' };

/**
 * How a watch stands: waiting for the run's first snapshot, live, reconnecting after losing the
 * connection, or failed (the stream keeps failing, or the browser already follows the most runs
 * one stream carries): the page falls back to polling.
 */
export type LiveStatus = 'connecting' | 'live' | 'reconnecting' | 'failed';

/** What the hub tells a page about one of its watches (`id`). */
export type FromHub =
  | { type: 'event'; id: string; event: LiveEventName; data: unknown }
  | { type: 'status'; id: string; status: LiveStatus }
  /** The run does not exist for this sign-in (or was deleted): the server's Error detail. */
  | { type: 'gone'; id: string; detail: string }
  /** The credential was refused (401, or revoked while streaming). */
  | { type: 'unauthorized'; id: string; sentKey: boolean };
