import type { SseEvent } from '../src/common/sse';
import { FakeModelServer, startFakeModelServer } from './fixtures/fake-model-server';
import { apiClient } from './support/api-client';
import { RunStreamHub } from '../src/modules/runs/live/run-stream-hub.service';
import { runCli } from './support/cli-process';
import { TcpProxy } from './support/tcp-proxy';
import { isStream, openSse, SseRefusal, SseStream } from './support/sse-stream';
import { createTestEnvironment, startTestApp, TestApp, TestEnvironment } from './support/test-app';
import { waitFor } from './support/wait';

/**
 * The per-run live stream across processes: two API replicas (A, B) and a worker, all Nest
 * applications on one database and Redis prefix. Runs are created through A and executed by the
 * worker; streams are read from A or B.
 */
describe('live run stream (GET /agent/runs/{runId}/stream)', () => {
  let model: FakeModelServer;
  let env: TestEnvironment;
  let a: TestApp;
  let b: TestApp;
  let worker: TestApp | undefined;
  let api: ReturnType<typeof apiClient>;
  /** A run that has SUCCEEDED once, for the follow-up tests. */
  let doneRunId: string;

  beforeAll(async () => {
    model = await startFakeModelServer();
    env = createTestEnvironment('stream', model.url);
    a = await startTestApp(env, ['api']);
    b = await startTestApp(env, ['api'], { 'runs.streamHeartbeatMs': 100 });
    api = apiClient(a.baseUrl, a.apiKey);
  });

  afterAll(async () => {
    await worker?.close();
    await b?.close();
    await a?.close();
    await env?.destroy();
    await model?.close();
  });

  const open = async (app: TestApp, runId: string, lastEventId?: string): Promise<SseStream> => {
    const stream = await openSse(`${app.baseUrl}/agent/runs/${runId}/stream`, {
      apiKey: app.apiKey,
      lastEventId,
    });
    if (!isStream(stream)) throw new Error(`stream refused: ${JSON.stringify(stream)}`);
    return stream;
  };
  const data = (event: SseEvent) => JSON.parse(event.data);
  const isRun = (state?: string) => (e: SseEvent) =>
    e.event === 'run' && (state === undefined || data(e).state === state);
  const cursor = (id: string) => id.split('-').map(BigInt);
  /** Timeline events and messages (what a resume replays), as `event id data` lines. */
  const items = (events: SseEvent[]) =>
    events.filter((e) => e.event !== 'run').map((e) => `${e.event} ${e.id} ${e.data}`);
  const conversationMessages = async (runId: string) => {
    const { body } = await api.get(`/agent/runs/${runId}/conversation`);
    return body.steps
      .flatMap((s: { messages: { role: string }[] }) => s.messages)
      .filter((m: { role: string }) => m.role !== 'system');
  };

  it('sends the snapshot, then state changes, timeline events and messages as they happen', async () => {
    model.script('stream-basic', [
      { toolCalls: [{ name: 'run_command', arguments: { command: 'echo streamed' } }] },
      { text: 'Streamed it.' },
    ]);
    const created = await api.post('/agent/runs', { prompt: 'Echo [script:stream-basic]' });
    const runId = created.body.run_id as string;
    const stream = await open(a, runId);
    expect(stream.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(stream.headers['cache-control']).toBe('no-cache, no-transform');

    // No worker yet: the run waits in QUEUED, and the snapshot is exactly GET's RunItem.
    const snapshot = await stream.next();
    expect(snapshot.event).toBe('run');
    expect(data(snapshot)).toEqual((await api.get(`/agent/runs/${runId}`)).body);
    expect(data(snapshot).state).toBe('QUEUED');

    worker = await startTestApp(env, ['worker']);
    const events = await stream.until(isRun('SUCCEEDED'), 'the SUCCEEDED snapshot');
    stream.close();

    const timeline = (await api.get(`/agent/runs/${runId}/timeline`)).body.events;
    // Everything after the connect, in order; `oz_run_created` came before it.
    expect(events.filter((e) => e.event === 'timeline').map(data)).toEqual(timeline.slice(1));
    expect(events.filter((e) => e.event === 'message').map(data)).toEqual(
      await conversationMessages(runId),
    );
    const states = events.filter(isRun()).map((e) => data(e).state);
    const order = ['QUEUED', 'CLAIMED', 'INPROGRESS', 'SUCCEEDED'];
    expect(states.map((s) => order.indexOf(s))).toEqual(
      [...states.map((s) => order.indexOf(s))].sort((x, y) => x - y),
    );
    const final = data(events.at(-1)!);
    const run = (await api.get(`/agent/runs/${runId}`)).body;
    expect(final).toMatchObject({ state: 'SUCCEEDED', status_message: run.status_message });
    expect(final.request_usage).toEqual(run.request_usage);
    // The messages: the prompt, the tool call, its result, the answer.
    const blocks = events
      .filter((e) => e.event === 'message')
      .flatMap((e) => data(e).content.map((c: { type: string }) => c.type));
    expect(blocks).toEqual(['text', 'action', 'action_result', 'text']);
    // Ids are cursors that never go back.
    const ids = [snapshot, ...events].map((e) => cursor(e.id!));
    ids.slice(1).forEach(([t, m], i) => {
      expect(t >= ids[i][0] && m >= ids[i][1]).toBe(true);
    });
    doneRunId = runId;
  });

  it('resumes from Last-Event-ID with exactly the missed events, also after a disconnect', async () => {
    const full = await open(a, doneRunId, '0-0');
    const snapshot = await full.next();
    expect(data(snapshot).state).toBe('SUCCEEDED');
    // The history, then the snapshot again where the replay ends.
    const history = await full.until(isRun(), 'the end of the replay');
    full.close();
    expect(history.at(-1)!.id).toBe(history.at(-2)!.id);
    const replayed = items(history);
    const timeline = (await api.get(`/agent/runs/${doneRunId}/timeline`)).body.events;
    expect(history.filter((e) => e.event === 'timeline').map(data)).toEqual(timeline);
    expect(new Set(replayed).size).toBe(replayed.length);

    // From any id: exactly what follows it. From the tool call's id, the replay's first message is its
    // result (after the command's timeline events), which still names the call (read from before the
    // cursor), as in the full conversation.
    const middle = history.find(
      (e) =>
        e.event === 'message' && data(e).content.some((c: { type: string }) => c.type === 'action'),
    )!;
    const partial = await open(a, doneRunId, middle.id);
    await partial.next(isRun());
    const rest = await partial.until(isRun(), 'the end of the replay');
    partial.close();
    expect(items(rest)).toEqual(replayed.slice(replayed.indexOf(items([middle])[0]) + 1));
    expect(rest.filter((e) => e.event === 'timeline').map((e) => data(e).event_type)).toEqual([
      'command_started',
      'command_output',
      'command_finished',
      'oz_run_done',
    ]);
    expect(data(rest.find((e) => e.event === 'message')!).content[0]).toMatchObject({
      type: 'action_result',
      name: 'run_command',
      category: 'command',
    });

    // Live: a follow-up reopens the run; this client drops after the first message.
    const live = await open(a, doneRunId);
    const start = (await live.next()).id!;
    const followup = await api.post(`/agent/runs/${doneRunId}/followups`, { message: 'Again' });
    expect(followup.status).toBe(200);
    const seen = await live.until((e) => e.event === 'message', 'the follow-up message');
    live.close();
    await live.ended;
    expect(data(seen.at(-1)!).content[0]).toMatchObject({ type: 'text', text: 'Again' });
    await waitFor(
      async () => (await api.get(`/agent/runs/${doneRunId}/timeline`)).body.events,
      (events: { event_type: string }[]) =>
        events.filter((e) => e.event_type === 'oz_run_done').length === 2,
      { what: 'the follow-up execution to finish' },
    );
    const resumed = await open(a, doneRunId, seen.at(-1)!.id);
    await resumed.next(isRun());
    const missed = await resumed.until(isRun(), 'the end of the replay');
    resumed.close();
    // What this client saw plus what it missed is everything after its first connect, once.
    const reference = await open(a, doneRunId, start);
    await reference.next(isRun());
    const everything = await reference.until(isRun(), 'the end of the replay');
    reference.close();
    expect([...items(seen), ...items(missed)]).toEqual(items(everything));
    expect(items(missed).length).toBeGreaterThan(0);
    expect(data(everything.at(-1)!).state).toBe('SUCCEEDED');
  });

  it('streams from a replica that neither wrote nor executed the changes', async () => {
    const stream = await open(b, doneRunId);
    expect(data(await stream.next()).state).toBe('SUCCEEDED');
    // B's heartbeat is 100 ms.
    await stream.comment(/^keep-alive$/);
    const before = (await api.get(`/agent/runs/${doneRunId}/timeline`)).body.events.length;
    await api.post(`/agent/runs/${doneRunId}/followups`, { message: 'Once more' });
    const events = await stream.until(
      (e) => e.event === 'timeline' && data(e).event_type === 'oz_run_done',
      'the follow-up to finish',
    );
    const last = await stream.next(isRun('SUCCEEDED'), 'the SUCCEEDED snapshot');
    stream.close();
    const timeline = (await api.get(`/agent/runs/${doneRunId}/timeline`)).body.events;
    expect(events.filter((e) => e.event === 'timeline').map(data)).toEqual(timeline.slice(before));
    expect(events.filter(isRun()).map((e) => data(e).state)).toContain('QUEUED');
    const messages = events.filter((e) => e.event === 'message').map(data);
    expect(messages[0].content[0]).toMatchObject({ type: 'text', text: 'Once more' });
    expect(messages).toEqual((await conversationMessages(doneRunId)).slice(-messages.length));
    expect(data(last).state).toBe('SUCCEEDED');
  });

  it('answers an unknown run, a missing key and a bad Last-Event-ID in the Oz Error model', async () => {
    const url = (runId: string) => `${a.baseUrl}/agent/runs/${runId}/stream`;
    const unknown = (await openSse(url('no-such-run'), { apiKey: a.apiKey })) as SseRefusal;
    expect(unknown.status).toBe(404);
    expect(unknown.headers['content-type']).toContain('application/problem+json');
    expect(unknown.body).toMatchObject({
      status: 404,
      error: expect.stringContaining('no-such-run'),
    });

    const anonymous = (await openSse(url(doneRunId))) as SseRefusal;
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toMatchObject({ status: 401 });

    const bad = (await openSse(url(doneRunId), {
      apiKey: a.apiKey,
      lastEventId: 'yesterday',
    })) as SseRefusal;
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain('Last-Event-ID');
  });

  describe('CLI runs watch', () => {
    beforeAll(async () => {
      worker ??= await startTestApp(env, ['worker']);
    });

    const watch = (...args: string[]) =>
      runCli(['runs', 'watch', ...args], {
        ...env.childEnv(),
        AMBIENT_API_URL: a.baseUrl,
        AMBIENT_API_KEY: a.apiKey,
      });

    it('prints the run to SUCCEEDED and exits 0 (and JSON lines with --json)', async () => {
      model.script('watch-ok', [{ text: 'Watched.' }]);
      const created = await api.post('/agent/runs', { prompt: 'Watch me [script:watch-ok]' });
      const result = await watch(created.body.run_id);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/timeline oz_run_created/);
      expect(result.stdout).toMatch(/user: Watch me \[script:watch-ok\]/);
      expect(result.stdout).toMatch(/assistant: Watched\./);
      expect(result.stdout.trimEnd().split('\n').at(-1)).toMatch(/state SUCCEEDED: Watched\.$/);

      const json = await watch(created.body.run_id, '--json');
      expect(json.code).toBe(0);
      const lines = json.stdout
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(lines[0]).toMatchObject({ event: 'run', id: expect.any(String) });
      expect(lines.at(-1)).toMatchObject({ event: 'run', data: { state: 'SUCCEEDED' } });
      expect(lines.map((l) => l.event)).toEqual(expect.arrayContaining(['timeline', 'message']));
    });

    it('exits 5 for a run cancelled while it is watched, 1 for an unknown run', async () => {
      model.script('watch-hang', [{ hang: true }]);
      const created = await api.post('/agent/runs', { prompt: 'Hang [script:watch-hang]' });
      const runId = created.body.run_id as string;
      const watching = watch(runId);
      await waitFor(
        () => api.runState(runId),
        (state) => state === 'INPROGRESS',
      );
      expect((await api.post(`/agent/runs/${runId}/cancel`)).status).toBe(200);
      const result = await watching;
      expect(result.code).toBe(5);
      expect(result.stdout).toMatch(/state CANCELLED/);

      const unknown = await watch('no-such-run');
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toContain('404');
    });

    it('reconnects with Last-Event-ID when the connection drops, showing nothing twice', async () => {
      const proxy = new TcpProxy('127.0.0.1', Number(new URL(a.baseUrl).port));
      await proxy.start();
      const hub = a.ambient.app.get(RunStreamHub);
      const streams = (count: number) =>
        waitFor(
          async () => hub.openStreams,
          (open) => open === count,
          { what: `${count} open streams on A` },
        );
      model.script('watch-drop', [{ hang: true }]);
      const created = await api.post('/agent/runs', { prompt: 'Hang on [script:watch-drop]' });
      const runId = created.body.run_id as string;
      await waitFor(
        () => api.runState(runId),
        (state) => state === 'INPROGRESS',
      );
      const watching = runCli(['runs', 'watch', runId], {
        ...env.childEnv(),
        AMBIENT_API_URL: a.baseUrl.replace(/:\d+\//, `:${proxy.port}/`),
        AMBIENT_API_KEY: a.apiKey,
      });
      await streams(1);
      await proxy.stop();
      // The server noticed the client is gone and let its stream go.
      await streams(0);
      await proxy.start();
      await streams(1);
      await api.post(`/agent/runs/${runId}/cancel`);
      const result = await watching;
      expect(result.code).toBe(5);
      expect(result.stderr).toMatch(/stream interrupted .*; reconnecting in \d+ ms/);
      const lines = result.stdout.trimEnd().split('\n');
      expect(new Set(lines).size).toBe(lines.length);
      expect(lines.filter((l) => / timeline oz_run_claimed/.test(l))).toHaveLength(1);
      expect(lines.at(-1)).toMatch(/state CANCELLED/);
      await proxy.stop();
    });
  });
  // Last: closing one in-process application also ends the database pool of the others (seen
  // before this feature too; separate processes are not affected).
  it('ends its streams when the application shuts down', async () => {
    const extra = await startTestApp(env, ['api']);
    const stream = await open(extra, doneRunId);
    await stream.next(isRun());
    await extra.close();
    await stream.ended;
    expect(stream.comments.at(-1)).toMatch(/shutting down; reconnect with Last-Event-ID/);
  });
});
