import { LiveHub, type HubClient } from './live-hub';
import type { FromHub, ToHub } from './protocol';

/** One GET /console/live-runs the hub made: its runs, its key, and the stream the test writes. */
interface Request {
  runs: string[];
  key: string | null;
  aborted: boolean;
  send(event: string, body: unknown): void;
  end(): void;
}

/** A fake of the server's stream endpoint: answers `status`, records each request. */
function fakeServer(status = 200) {
  const requests: Request[] = [];
  const encoder = new TextEncoder();
  const fetchImpl = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(String(input), 'http://console.test');
    const headers = (init?.headers ?? {}) as Record<string, string>;
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    const body = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) });
    const request: Request = {
      runs: (url.searchParams.get('runs') ?? '').split(','),
      key: headers.Authorization?.replace('Bearer ', '') ?? null,
      aborted: false,
      send: (event, data) =>
        controller.enqueue(encoder.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)),
      end: () => controller.close(),
    };
    init?.signal?.addEventListener('abort', () => {
      request.aborted = true;
      controller.error(new Error('aborted'));
    });
    requests.push(request);
    if (status !== 200) return new Response('{}', { status });
    return new Response(body, { headers: { 'content-type': 'text/event-stream; charset=utf-8' } });
  }) as typeof fetch;
  return { requests, fetchImpl };
}

/** A page attached to the hub, keeping what the hub told it. */
function page(hub: LiveHub) {
  const received: FromHub[] = [];
  const client: HubClient = { post: (message) => received.push(message) };
  const send = hub.attach(client);
  return {
    received,
    client,
    watch: (id: string, runId: string, key: string | null = 'key-a') =>
      send({ type: 'watch', id, runId, key } satisfies ToHub),
    unwatch: (id: string) => send({ type: 'unwatch', id }),
    detach: () => send({ type: 'detach' }),
    /** The run events of watch `id`, as `event state-or-name`. */
    events: (id: string) =>
      received
        .filter((m): m is Extract<FromHub, { type: 'event' }> => m.type === 'event' && m.id === id)
        .map(
          (m) =>
            `${m.event} ${(m.data as { state?: string; name?: string }).state ?? (m.data as { name?: string }).name}`,
        ),
    statuses: (id: string) =>
      received
        .filter((m) => m.type === 'status' && m.id === id)
        .map((m) => (m as { status: string }).status),
  };
}

/** Waits (a bounded number of event-loop turns) until `check` holds: the hub works on promises. */
async function until(check: () => boolean, what: string): Promise<void> {
  for (let turn = 0; turn < 1000; turn++) {
    if (check()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`never: ${what}`);
}

/**
 * Resolves after the hub's pending sync: with `syncDelayMs: 0` it is a 0 ms timer set earlier,
 * and timers of equal delay fire in the order they were set.
 */
const afterSync = () => new Promise((resolve) => setTimeout(resolve, 0));

const run = (id: string, state: string) => ({ run_id: id, state });

describe('LiveHub', () => {
  it('carries every watched run of one sign-in on one connection, resuming the others when a run joins', async () => {
    const server = fakeServer();
    const hub = new LiveHub({ fetch: server.fetchImpl, syncDelayMs: 0 });
    const first = page(hub);
    first.watch('w1', 'run-a');
    await until(() => server.requests.length === 1, 'the first connection');
    expect(server.requests[0]).toMatchObject({ runs: ['run-a'], key: 'key-a' });
    server.requests[0].send('run', { run_id: 'run-a', id: '4-2', data: run('run-a', 'QUEUED') });
    await until(() => first.statuses('w1').includes('live'), 'run-a live');

    // Another page watches another run: one new connection, resuming run-a after its cursor.
    const second = page(hub);
    second.watch('w2', 'run-b');
    await until(() => server.requests.length === 2, 'the reconnect');
    expect(server.requests[0].aborted).toBe(true);
    expect(server.requests[1].runs).toEqual(['run-a@4-2', 'run-b']);
    const stream = server.requests[1];
    // The resumed snapshot is the one pages have: not sent again.
    stream.send('run', { run_id: 'run-a', id: '4-2', data: run('run-a', 'QUEUED') });
    stream.send('run', { run_id: 'run-b', id: '0-0', data: run('run-b', 'QUEUED') });
    stream.send('timeline', { run_id: 'run-a', id: '5-2', data: { name: 'claimed' } });
    stream.send('run', { run_id: 'run-a', id: '5-2', data: run('run-a', 'CLAIMED') });
    await until(() => first.events('w1').length === 3, "run-a's news");
    expect(first.events('w1')).toEqual(['run QUEUED', 'timeline claimed', 'run CLAIMED']);
    expect(second.events('w2')).toEqual(['run QUEUED']);
    expect(hub.connections).toBe(1);

    // A third page on a run already carried: its latest snapshot at once, no reconnect.
    const third = page(hub);
    third.watch('w3', 'run-a');
    expect(third.statuses('w3')).toEqual(['live']);
    expect(third.events('w3')).toEqual(['run CLAIMED']);
    await afterSync();
    expect(server.requests).toHaveLength(2);

    // Pages leave: a run nobody watches rides along until the last watch ends the connection.
    first.unwatch('w1');
    second.detach();
    await afterSync();
    expect(server.requests).toHaveLength(2);
    expect(stream.aborted).toBe(false);
    third.unwatch('w3');
    await until(() => stream.aborted, 'the connection to close');
    expect(hub.connections).toBe(0);
  });

  it("never hands a run's news to a page signed in with another key", async () => {
    const server = fakeServer();
    const hub = new LiveHub({ fetch: server.fetchImpl, syncDelayMs: 0 });
    const ours = page(hub);
    const theirs = page(hub);
    theirs.watch('t1', 'their-run', 'key-b');
    await until(() => server.requests.length === 1, 'their connection');
    server.requests[0].send('run', {
      run_id: 'their-run',
      id: '1-0',
      data: run('their-run', 'QUEUED'),
    });
    await until(() => theirs.events('t1').length === 1, 'their snapshot');

    // Our page asks for their run: our own connection, which the server answers `gone`.
    ours.watch('o1', 'their-run', 'key-a');
    await until(() => server.requests.length === 2, 'our connection');
    expect(server.requests[1]).toMatchObject({ runs: ['their-run'], key: 'key-a' });
    expect(server.requests[0].aborted).toBe(false);
    server.requests[1].send('gone', {
      run_id: 'their-run',
      error: { detail: 'run "their-run" not found' },
    });
    server.requests[0].send('run', {
      run_id: 'their-run',
      id: '2-0',
      data: run('their-run', 'CANCELLED'),
    });
    await until(() => theirs.events('t1').length === 2, 'their change');
    expect(ours.received).toEqual([
      { type: 'status', id: 'o1', status: 'connecting' },
      { type: 'gone', id: 'o1', detail: 'run "their-run" not found' },
    ]);
    expect(hub.connections).toBe(2);
  });

  it('refuses what is not a run id without asking the server, and says when the key is refused', async () => {
    const server = fakeServer(401);
    const hub = new LiveHub({ fetch: server.fetchImpl, syncDelayMs: 0 });
    const one = page(hub);
    one.watch('bad', 'not,a/run');
    expect(one.received).toEqual([
      { type: 'gone', id: 'bad', detail: 'run "not,a/run" not found' },
    ]);
    one.watch('w1', 'run-a', 'revoked');
    await until(() => one.received.some((m) => m.type === 'unauthorized'), 'the refusal');
    expect(server.requests.map((r) => r.runs)).toEqual([['run-a']]);
    expect(one.received.at(-1)).toEqual({ type: 'unauthorized', id: 'w1', sentKey: true });
    expect(hub.connections).toBe(0);
  });
});
