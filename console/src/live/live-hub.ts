import { readLiveRuns, type LiveStreamEnd } from './live-connection';
import {
  LIVE_RUNS_PATH,
  type FromHub,
  type LiveEventName,
  type LiveStatus,
  type ToHub,
} from './protocol';

/** A page attached to the hub: where its watches' news go. */
export interface HubClient {
  post(message: FromHub): void;
}

export interface LiveHubOptions {
  fetch?: typeof fetch;
  /**
   * How long changes to the watches gather before the connection follows them: a page moving
   * to another run unwatches and watches in separate messages, which should cost one reconnect.
   */
  syncDelayMs?: number;
}

/** The most runs one stream carries (the server's limit); pages beyond it poll. */
export const MAX_LIVE_RUNS = 50;
/** Runs no page watches any more that a connection keeps carrying rather than reconnecting. */
const MAX_STALE_RUNS = 10;
const MAX_RETRY_MS = 15_000;
const FAILURES_BEFORE_FALLBACK = 3;
const RUN_ID = /^[A-Za-z0-9_-]{1,64}$/;

interface Watch {
  id: string;
  runId: string;
  client: HubClient;
  group: Group;
  status?: LiveStatus;
}

interface Connection {
  runs: Set<string>;
  abort: AbortController;
  received: boolean;
}

/** The watches of one credential (an API key, or the session cookie) and their connection. */
interface Group {
  key: string | null;
  watches: Set<Watch>;
  /** Each run's last event id, so a new connection resumes exactly where this one was. */
  cursors: Map<string, string>;
  /** Each run's last RunItem, for a page that starts watching a run already followed. */
  snapshots: Map<string, string>;
  /** Runs whose snapshot came on the current connection (or one it resumed). */
  live: Set<string>;
  /** Runs the server said do not exist for this credential, with its words. */
  gone: Map<string, string>;
  connection: Connection | null;
  failures: number;
  /** The credential was refused: nothing is tried again until a page watches anew. */
  refused: boolean;
  syncTimer?: ReturnType<typeof setTimeout>;
  retryTimer?: ReturnType<typeof setTimeout>;
}

/**
 * The browser's live connections: every watch of every attached page, one GET
 * /console/live-runs stream per credential carrying all the runs they watch. A watch of a run
 * the stream already carries costs nothing; one of a new run reconnects with every run's
 * cursor, so the others miss nothing. A run's news go only to the watches of the same
 * credential: a page signed in to one team never sees another team's runs, even when another
 * tab of the browser streams them.
 */
export class LiveHub {
  private readonly groups = new Map<string, Group>();
  private readonly clients = new Map<HubClient, Map<string, Watch>>();
  private readonly fetchImpl: typeof fetch;
  private readonly syncDelayMs: number;

  constructor(options: LiveHubOptions = {}) {
    this.fetchImpl = options.fetch ?? ((input, init) => fetch(input, init));
    this.syncDelayMs = options.syncDelayMs ?? 30;
  }

  /** How many streams are open or opening (for tests). */
  get connections(): number {
    return [...this.groups.values()].filter((group) => group.connection).length;
  }

  /** Attaches a page; returns what to call with each of its messages. */
  attach(client: HubClient): (message: ToHub) => void {
    this.clients.set(client, new Map());
    return (message) => this.receive(client, message);
  }

  /** The page is gone for good (its port closed): its watches end. */
  detach(client: HubClient): void {
    this.unwatchAll(client);
    this.clients.delete(client);
  }

  private unwatchAll(client: HubClient): void {
    const watches = this.clients.get(client);
    for (const watch of watches?.values() ?? []) this.remove(watch);
    watches?.clear();
  }

  private receive(client: HubClient, message: ToHub): void {
    const watches = this.clients.get(client);
    if (!watches) return;
    // A page that leaves may come back from the back/forward cache and watch again.
    if (message.type === 'detach') return this.unwatchAll(client);
    const known = watches.get(message.id);
    if (known) {
      watches.delete(message.id);
      this.remove(known);
    }
    if (message.type === 'watch') this.add(client, watches, message);
  }

  private add(
    client: HubClient,
    watches: Map<string, Watch>,
    { id, runId, key }: { id: string; runId: string; key: string | null },
  ): void {
    const group = this.group(key);
    const watch: Watch = { id, runId, client, group };
    watches.set(id, watch);
    group.watches.add(watch);
    group.refused = false;
    if (!RUN_ID.test(runId)) group.gone.set(runId, `run "${runId}" not found`);
    const gone = group.gone.get(runId);
    const snapshot = group.snapshots.get(runId);
    if (gone !== undefined) {
      client.post({ type: 'gone', id, detail: gone });
    } else if (group.live.has(runId) && snapshot !== undefined) {
      this.status(watch, 'live');
      client.post({ type: 'event', id, event: 'run', data: JSON.parse(snapshot) as unknown });
    } else {
      this.status(watch, 'connecting');
    }
    this.scheduleSync(group);
  }

  private remove(watch: Watch): void {
    const { group, runId } = watch;
    group.watches.delete(watch);
    if (![...group.watches].some((other) => other.runId === runId)) {
      for (const map of [group.cursors, group.snapshots, group.gone]) map.delete(runId);
      group.live.delete(runId);
    }
    this.scheduleSync(group);
  }

  private group(key: string | null): Group {
    const name = key ?? '';
    let group = this.groups.get(name);
    if (!group) {
      group = {
        key,
        watches: new Set(),
        cursors: new Map(),
        snapshots: new Map(),
        live: new Set(),
        gone: new Map(),
        connection: null,
        failures: 0,
        refused: false,
      };
      this.groups.set(name, group);
    }
    return group;
  }

  private scheduleSync(group: Group): void {
    if (group.syncTimer !== undefined) return;
    group.syncTimer = setTimeout(() => {
      group.syncTimer = undefined;
      this.sync(group);
    }, this.syncDelayMs);
  }

  /** Makes the group's connection carry the runs its pages watch. */
  private sync(group: Group): void {
    const wanted = [...new Set([...group.watches].map((watch) => watch.runId))].filter(
      (runId) => !group.gone.has(runId),
    );
    if (wanted.length === 0) {
      this.disconnect(group);
      if (group.watches.size === 0) this.groups.delete(group.key ?? '');
      return;
    }
    const carried = wanted.slice(0, MAX_LIVE_RUNS);
    for (const watch of group.watches) {
      if (!carried.includes(watch.runId) && !group.gone.has(watch.runId)) {
        this.status(watch, 'failed');
      }
    }
    if (group.refused || group.retryTimer !== undefined) return;
    const current = group.connection;
    const stale = current ? current.runs.size - carried.length : 0;
    if (current && carried.every((runId) => current.runs.has(runId)) && stale <= MAX_STALE_RUNS) {
      return;
    }
    void this.connect(group, carried);
  }

  private disconnect(group: Group): void {
    clearTimeout(group.retryTimer);
    group.retryTimer = undefined;
    group.connection?.abort.abort();
    group.connection = null;
    group.live.clear();
  }

  private async connect(group: Group, runs: string[]): Promise<void> {
    group.connection?.abort.abort();
    const connection: Connection = {
      runs: new Set(runs),
      abort: new AbortController(),
      received: false,
    };
    group.connection = connection;
    const query = runs
      .map((runId) => {
        const cursor = group.cursors.get(runId);
        return cursor ? `${runId}@${cursor}` : runId;
      })
      .join(',');
    const end = await readLiveRuns(
      `${LIVE_RUNS_PATH}?runs=${encodeURIComponent(query)}`,
      group.key,
      {
        opened: () => undefined,
        event: (runId, event, id, data) => {
          if (group.connection !== connection || !connection.runs.has(runId)) return;
          connection.received = true;
          this.deliver(group, runId, event, id, data);
        },
        gone: (runId, detail) => {
          if (group.connection !== connection) return;
          group.gone.set(runId, detail);
          for (const watch of this.watchesOf(group, runId)) {
            watch.client.post({ type: 'gone', id: watch.id, detail });
          }
        },
      },
      connection.abort.signal,
      this.fetchImpl,
    );
    if (group.connection === connection) this.ended(group, connection, end);
  }

  private deliver(
    group: Group,
    runId: string,
    event: LiveEventName,
    id: string,
    data: unknown,
  ): void {
    if (id) group.cursors.set(runId, id);
    if (event === 'run') {
      group.live.add(runId);
      for (const watch of this.watchesOf(group, runId)) this.status(watch, 'live');
      const snapshot = JSON.stringify(data);
      // A reconnect resends each run's snapshot: pages already have it.
      if (group.snapshots.get(runId) === snapshot) return;
      group.snapshots.set(runId, snapshot);
    }
    for (const watch of this.watchesOf(group, runId)) {
      watch.client.post({ type: 'event', id: watch.id, event, data });
    }
  }

  private ended(group: Group, connection: Connection, end: LiveStreamEnd): void {
    group.connection = null;
    group.live.clear();
    if (end === 'aborted') return;
    if (end === 'unauthorized') {
      group.refused = true;
      for (const watch of group.watches) {
        watch.client.post({ type: 'unauthorized', id: watch.id, sentKey: group.key !== null });
      }
      return;
    }
    group.failures = connection.received ? 0 : group.failures + 1;
    const status = group.failures >= FAILURES_BEFORE_FALLBACK ? 'failed' : 'reconnecting';
    for (const watch of group.watches) {
      if (connection.runs.has(watch.runId)) this.status(watch, status);
    }
    group.retryTimer = setTimeout(
      () => {
        group.retryTimer = undefined;
        this.sync(group);
      },
      Math.min(1000 * group.failures, MAX_RETRY_MS),
    );
  }

  private watchesOf(group: Group, runId: string): Watch[] {
    return [...group.watches].filter((watch) => watch.runId === runId);
  }

  private status(watch: Watch, status: LiveStatus): void {
    if (watch.status === status) return;
    watch.status = status;
    watch.client.post({ type: 'status', id: watch.id, status });
  }
}
