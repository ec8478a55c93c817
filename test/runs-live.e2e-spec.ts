import type { SseEvent } from '../src/common/sse';
import { RunStreamHub } from '../src/modules/runs/live/run-stream-hub.service';
import { ApiKeysService } from '../src/modules/teams/api-keys.service';
import { KeyRevocationWatch } from '../src/modules/teams/key-revocation-watch.service';
import { TeamsService } from '../src/modules/teams/teams.service';
import { apiClient } from './support/api-client';
import { isStream, openSse, SseRefusal, SseStream } from './support/sse-stream';
import { useTestApp } from './support/use-test-app';
import { waitFor } from './support/wait';

interface Envelope {
  run_id: string;
  id?: string;
  data?: { state?: string; event_type?: string };
  error?: { status: number; detail: string; title: string };
}

/**
 * GET /console/live-runs: the console's one stream of many runs, scoped as the per-run stream.
 * No worker role: runs stay QUEUED until a test cancels them.
 */
describe('live-runs stream (GET /console/live-runs)', () => {
  const { app, api } = useTestApp('runs-live', ['api']);
  let otherKey: string;
  let viewerKey: string;

  beforeAll(async () => {
    const keys = app.ambient.app.get(ApiKeysService);
    const teams = app.ambient.app.get(TeamsService);
    const others = await teams.createTeam('live-others');
    const other = await teams.createUser(others, { displayName: 'Other', role: 'admin' });
    otherKey = (await keys.create(other, 'other')).key;
    const us = (await keys.authenticate(app.apiKey))!;
    viewerKey = (
      await keys.create({ id: us.userId, teamId: us.teamId }, 'viewer', { role: 'viewer' })
    ).key;
  });

  const url = (runs: string) => `${app.baseUrl}/console/live-runs?runs=${encodeURIComponent(runs)}`;
  const open = async (runs: string, apiKey = app.apiKey): Promise<SseStream> => {
    const stream = await openSse(url(runs), { apiKey });
    if (!isStream(stream)) throw new Error(`stream refused: ${JSON.stringify(stream)}`);
    return stream;
  };
  const body = (event: SseEvent) => JSON.parse(event.data) as Envelope;
  const ofRun = (runId: string, event?: string, state?: string) => (e: SseEvent) =>
    body(e).run_id === runId &&
    (event === undefined || e.event === event) &&
    (state === undefined || body(e).data?.state === state);
  const queued = async (client = api): Promise<string> => {
    const created = await client.post('/agent/runs', { prompt: 'Wait' });
    expect(created.status).toBe(200);
    return created.body.run_id as string;
  };
  const cancel = async (runId: string, client = api) =>
    expect((await client.post(`/agent/runs/${runId}/cancel`)).status).toBe(200);

  it("streams several runs on one connection, each event naming its run; another team's run is gone", async () => {
    const [first, second] = [await queued(), await queued()];
    const theirs = await queued(apiClient(app.baseUrl, otherKey));
    const stream = await open(`${first},${theirs},no-such-run,${second}`);
    expect(stream.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(app.ambient.app.get(RunStreamHub).openStreams).toBe(1);

    // Snapshots in the order asked; their run and a run that does not exist look the same.
    const start = await stream.until(ofRun(second, 'run'), "the second run's snapshot");
    expect(start.map((e) => `${e.event} ${body(e).run_id}`)).toEqual([
      `run ${first}`,
      `gone ${theirs}`,
      'gone no-such-run',
      `run ${second}`,
    ]);
    expect(body(start[0]).data).toEqual((await api.get(`/agent/runs/${first}`)).body);
    const gone = [body(start[1]).error, body(start[2]).error];
    expect(gone[0]).toMatchObject({ status: 404, detail: `run "${theirs}" not found` });
    expect(gone[1]).toMatchObject({ status: 404, detail: 'run "no-such-run" not found' });
    expect(Object.keys(gone[0]!).sort()).toEqual(Object.keys(gone[1]!).sort());

    // Their run changes first, then ours: ours arrives, theirs never does.
    await cancel(theirs, apiClient(app.baseUrl, otherKey));
    await cancel(second);
    const live = await stream.until(ofRun(second, 'run', 'CANCELLED'), 'the cancel, live');
    expect(live.some((e) => e.event === 'timeline' && body(e).run_id === second)).toBe(true);
    expect(stream.events.filter((e) => body(e).run_id === theirs)).toHaveLength(1);
    expect(stream.events.filter((e) => body(e).run_id === first)).toHaveLength(1);
    stream.close();
    await waitFor(
      async () => app.ambient.app.get(RunStreamHub).openStreams,
      (open) => open === 0,
      { what: 'the stream to close on the server' },
    );
  });

  it('resumes each run after the id it names, with exactly what was missed', async () => {
    const runId = await queued();
    const first = await open(runId);
    const snapshot = await first.next(ofRun(runId, 'run'));
    first.close();
    await cancel(runId);
    const timeline = (await api.get(`/agent/runs/${runId}/timeline`)).body.events as unknown[];

    const resumed = await open(`${runId}@${body(snapshot).id}`);
    // The snapshot, the missed timeline events, the snapshot again (the end of the replay).
    await resumed.next(ofRun(runId, 'run'));
    const replay = await resumed.until(ofRun(runId, 'run'), 'the end of the replay');
    resumed.close();
    const missed = replay.filter((e) => e.event === 'timeline').map((e) => body(e).data);
    expect(missed.length).toBeGreaterThan(0);
    expect(missed).toEqual(timeline.slice(timeline.length - missed.length));
    expect(body(replay.at(-1)!).data?.state).toBe('CANCELLED');
  });

  it("lets a viewer follow the team's runs, as the per-run stream does", async () => {
    const runId = await queued();
    const stream = await open(runId, viewerKey);
    expect((await stream.next(ofRun(runId, 'run'))).event).toBe('run');
    await cancel(runId);
    await stream.next(ofRun(runId, 'run', 'CANCELLED'), 'the cancel');
    stream.close();
  });

  it('answers bad input and a missing key in the Oz Error model, naming the field', async () => {
    const refused = async (runs: string | null, apiKey?: string) => {
      const target = runs === null ? `${app.baseUrl}/console/live-runs` : url(runs);
      return (await openSse(target, { apiKey })) as SseRefusal;
    };
    const cases: [string | null, RegExp][] = [
      [null, /^runs: name at least one run/],
      ['a,,b', /^runs: "" is not a run id/],
      ['run-1@12', /^runs: "run-1@12": after @ comes an event id/],
      ['run-1,run-1', /^runs: run "run-1" is listed twice/],
      [Array.from({ length: 51 }, (_, i) => `run-${i}`).join(','), /^runs: at most 50 runs/],
    ];
    for (const [runs, detail] of cases) {
      const answer = await refused(runs, app.apiKey);
      expect(answer.status).toBe(400);
      expect(answer.headers['content-type']).toContain('application/problem+json');
      expect(answer.body.detail).toMatch(detail);
    }
    expect((await refused('run-1')).status).toBe(401);
    expect(app.ambient.app.get(RunStreamHub).openStreams).toBe(0);
    // Console-internal: not part of the published API.
    const paths = (await api.get('/openapi.json')).body.paths as Record<string, unknown>;
    expect(Object.keys(paths).filter((path) => path.includes('live-runs'))).toEqual([]);
  });

  it('ends the stream with an Oz error when its key is revoked', async () => {
    const keys = app.ambient.app.get(ApiKeysService);
    const us = (await keys.authenticate(app.apiKey))!;
    const doomed = await keys.create({ id: us.userId, teamId: us.teamId }, 'doomed');
    const runId = await queued();
    const stream = await open(runId, doomed.key);
    await stream.next(ofRun(runId, 'run'));
    await keys.revoke(doomed.id);
    await app.ambient.app.get(KeyRevocationWatch).checkNow();
    const error = await stream.next((e) => e.event === 'error', 'the error event');
    await stream.ended;
    expect(JSON.parse(error.data)).toMatchObject({
      status: 401,
      detail: expect.stringContaining('revoked') as string,
      instance: '/api/v1/console/live-runs',
    });
  });
});
