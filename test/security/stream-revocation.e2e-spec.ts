import { RunStreamHub } from '../../src/modules/runs/live/run-stream-hub.service';
import { KeyRevocationWatch } from '../../src/modules/teams/key-revocation-watch.service';
import type { SseEvent } from '../../src/common/sse';
import { apiClient } from '../support/api-client';
import { runCli } from '../support/cli-process';
import { createWorkerCredential, RawWorkerClient } from '../support/raw-worker-client';
import { isStream, openSse, SseStream } from '../support/sse-stream';
import { useTestApp } from '../support/use-test-app';
import { waitFor } from '../support/wait';

/** What an issue-19 attacker relied on: a revoked key kept its open stream for minutes. */
const REVOCATION_BOUND_MS = 10_000;

/**
 * Issue 19, class 7: revoking a key ends what it opened (live run streams, self-hosted worker
 * websockets) within 10 s, whoever revoked it and however (CLI, identity API, identity deleted).
 */
describe('security: revocation ends what a key opened', () => {
  let admin: ReturnType<typeof apiClient>;

  // No worker role: runs stay QUEUED, so nothing but the revocation can end their streams.
  const { env, app } = useTestApp('sec-revocation', ['api']);

  beforeAll(async () => {
    admin = apiClient(app.baseUrl, app.apiKey);
  });

  const cli = (...args: string[]) => runCli(args, env.childEnv());

  /** A team key made with the CLI, and its id (from the CLI's stderr). */
  const teamKey = async (team: string): Promise<{ key: string; id: string }> => {
    const created = await cli('api-keys', 'create', '--team', team, '--create-team');
    expect(created.code).toBe(0);
    const id = /API key "[^"]*" \(id ([^)]+)\)/.exec(created.stderr)?.[1];
    const key = created.stdout.trim().split('\n').pop();
    if (!id || !key) throw new Error(`unexpected CLI output: ${created.stdout} ${created.stderr}`);
    return { key, id };
  };

  const openRunStream = async (apiKey: string): Promise<SseStream> => {
    const created = await apiClient(app.baseUrl, apiKey).post('/agent/runs', { prompt: 'Wait' });
    expect(created.status).toBe(200);
    const stream = await openSse(`${app.baseUrl}/agent/runs/${created.body.run_id}/stream`, {
      apiKey,
    });
    if (!isStream(stream)) throw new Error(`stream refused: ${JSON.stringify(stream)}`);
    expect((await stream.next()).event).toBe('run');
    return stream;
  };

  /** Awaits the Oz error event and the end of the stream, and how long after `since` it came. */
  const closedWithError = async (stream: SseStream, since: number) => {
    const error: SseEvent = await stream.next((e) => e.event === 'error', 'the error event');
    await stream.ended;
    return { elapsed: Date.now() - since, problem: JSON.parse(error.data) };
  };

  it('closes a stream opened with a team key within 10 s of "api-keys revoke", leaving others open', async () => {
    const { key, id } = await teamKey('revoked-team');
    const stream = await openRunStream(key);
    const bystander = await openRunStream(app.apiKey);
    let bystanderEnded = false;
    void bystander.ended.then(() => (bystanderEnded = true));

    expect((await cli('api-keys', 'revoke', '--id', id)).code).toBe(0);
    const revokedAt = Date.now();
    const { elapsed, problem } = await closedWithError(stream, revokedAt);

    expect(elapsed).toBeLessThan(REVOCATION_BOUND_MS);
    expect(problem).toMatchObject({
      status: 401,
      title: 'Authentication required',
      detail: expect.stringContaining('revoked') as string,
      instance: expect.stringMatching(/^\/api\/v1\/agent\/runs\/[^/]+\/stream$/) as string,
    });
    expect(typeof problem.trace_id).toBe('string');
    // A check that ran after the revocation left the valid key's stream alone.
    await app.ambient.app.get(KeyRevocationWatch).checkNow();
    expect(bystanderEnded).toBe(false);
    expect(bystander.events.some((e) => e.event === 'error')).toBe(false);
    bystander.close();
    // The revoked key opens nothing new.
    const again = await admin.get('/agent/runs');
    expect(again.status).toBe(200);
    expect((await apiClient(app.baseUrl, key).get('/agent/runs')).status).toBe(401);
  });

  it('closes a stream opened with an agent identity key when the key is revoked, and when the identity is deleted', async () => {
    const identity = await admin.post('/agent/identities', { name: 'streamer' });
    expect(identity.status).toBe(201);
    const uid = identity.body.uid as string;
    const keys = `/agent/identities/${uid}/api-keys`;
    const first = await admin.post(keys, { name: 'revoked' });
    const second = await admin.post(keys, { name: 'deleted-with-identity' });
    expect([first.status, second.status]).toEqual([201, 201]);
    const revokedStream = await openRunStream(first.body.key as string);
    const deletedStream = await openRunStream(second.body.key as string);

    expect((await admin.delete(`${keys}/${first.body.id}`)).status).toBe(204);
    const revoked = await closedWithError(revokedStream, Date.now());
    expect(revoked.elapsed).toBeLessThan(REVOCATION_BOUND_MS);
    expect(revoked.problem.status).toBe(401);
    expect(deletedStream.events.some((e) => e.event === 'error')).toBe(false);

    expect((await admin.delete(`/agent/identities/${uid}`)).status).toBe(204);
    const deleted = await closedWithError(deletedStream, Date.now());
    expect(deleted.elapsed).toBeLessThan(REVOCATION_BOUND_MS);
    expect(deleted.problem.status).toBe(401);
  });

  it('closes a self-hosted worker websocket when its worker credential is revoked', async () => {
    const { credential, id } = await createWorkerCredential(admin, 'revoked-worker');
    const worker = await RawWorkerClient.connect(app.baseUrl, credential, 'revoked-worker');
    const closed = worker.whenClosed(60_000);
    expect((await admin.delete(`/worker-credentials/${id}`)).status).toBe(204);
    const revokedAt = Date.now();
    await closed;
    expect(Date.now() - revokedAt).toBeLessThan(REVOCATION_BOUND_MS);
    expect(worker.closeCode).toBe(1008);
  });

  it('makes "runs watch" stop with the refusal instead of reconnecting', async () => {
    const { key, id } = await teamKey('watch-team');
    const created = await apiClient(app.baseUrl, key).post('/agent/runs', { prompt: 'Wait' });
    const hub = app.ambient.app.get(RunStreamHub);
    await waitFor(
      async () => hub.openStreams,
      (n) => n === 0,
      { what: 'earlier streams to end' },
    );
    const watching = runCli(['runs', 'watch', created.body.run_id as string, '--json'], {
      ...env.childEnv(),
      AMBIENT_API_URL: app.baseUrl,
      AMBIENT_API_KEY: key,
    });
    await waitFor(
      async () => hub.openStreams,
      (n) => n === 1,
      {
        what: 'the watch to connect',
        timeoutMs: 60_000,
      },
    );
    expect((await cli('api-keys', 'revoke', '--id', id)).code).toBe(0);
    const result = await watching;
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /401 Authentication required \(the API key of this stream was revoked/,
    );
    expect(result.stderr).not.toContain('reconnecting');
    const last = JSON.parse(result.stdout.trimEnd().split('\n').at(-1)!);
    expect(last).toMatchObject({ event: 'error', data: { status: 401 } });
  });
});
