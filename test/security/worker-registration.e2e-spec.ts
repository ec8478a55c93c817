import { apiClient } from '../support/api-client';
import {
  createWorkerCredential,
  RawWorkerClient,
  refusedHandshake,
  workerSocketUrl,
} from '../support/raw-worker-client';
import { useTestApp } from '../support/use-test-app';
import { waitFor } from '../support/wait';

/**
 * A credential goes only where its owner sent it: a run is handed (with its run-scoped key, which
 * opens `/harness-support/start`: MCP headers, git token, secrets) only to a worker registered
 * with a worker credential an admin made for its id or pool. An API key, a member's above all,
 * registers no worker.
 */
describe('security: self-hosted worker registration', () => {
  const { app, api } = useTestApp('sec-worker-reg', ['api'], {}, { model: false });
  const clients: RawWorkerClient[] = [];
  let member: ReturnType<typeof apiClient>;
  let memberKey: string;

  beforeAll(async () => {
    const created = await api.post('/api-keys', { name: 'member', role: 'member' });
    expect(created.status).toBe(201);
    memberKey = created.body.key as string;
    member = apiClient(app.baseUrl, memberKey);
  });

  afterEach(() => {
    for (const client of clients.splice(0)) client.close();
  });

  const connect = async (bearer: string, workerId: string) => {
    const client = await RawWorkerClient.connect(app.baseUrl, bearer, workerId);
    clients.push(client);
    return client;
  };
  const createRun = async (as: ReturnType<typeof apiClient>, workerHost: string) => {
    const created = await as.post('/agent/runs', {
      prompt: 'Deploy with the team token',
      config: { worker_host: workerHost },
    });
    expect(created.status).toBe(200);
    return created.body.run_id as string;
  };
  const credentialFor = (workerId: string) => createWorkerCredential(api, workerId);
  /** A worker connected with `credential` and offered a new run; the run key's harness calls. */
  const offeredRun = async (credential: string, workerId: string) => {
    const worker = await connect(credential, workerId);
    const held = await createRun(api, workerId);
    const offered = await worker.next('task_assignment');
    expect(offered.data.task_id).toBe(held);
    const runKey = (offered.data.env_vars as Record<string, string>).WARP_API_KEY;
    const harness = (path: string) =>
      api
        .raw()
        .post(`${api.prefix}/harness-support/${path}`)
        .set('Authorization', `Bearer ${runKey}`);
    return { worker, held, harness };
  };

  it("refuses a member's key (and any API key) as a worker; the run goes to the enrolled worker", async () => {
    for (const key of [memberKey, app.apiKey]) {
      const refused = await refusedHandshake(workerSocketUrl(app.baseUrl, 'team-box'), {
        Authorization: `Bearer ${key}`,
      });
      expect(refused.status).toBe(403);
      expect(refused.body.detail).toMatch(
        /^an API key cannot register a self-hosted worker: register with a worker credential/,
      );
    }
    const adminRun = await createRun(api, 'team-box');
    const { credential } = await credentialFor('team-box');
    expect(credential).toMatch(/^ambw_/);
    const teamWorker = await connect(credential, 'team-box');
    const offered = await teamWorker.next('task_assignment');
    expect(offered.data.task_id).toBe(adminRun);
    // The run-scoped key in the offer is what opens /harness-support/start.
    const runKey = (offered.data.env_vars as Record<string, string>).WARP_API_KEY;
    expect(runKey).toMatch(/^amb_/);
  });

  it('registers only the worker ids the credential names (one id, or a pool prefix)', async () => {
    const pool = await credentialFor('ci-*');
    const poolWorker = await connect(pool.credential, 'ci-7');
    const run = await createRun(api, 'ci-7');
    expect((await poolWorker.next('task_assignment')).data.task_id).toBe(run);

    const outside = await refusedHandshake(workerSocketUrl(app.baseUrl, 'prod-1'), {
      Authorization: `Bearer ${pool.credential}`,
    });
    expect(outside.status).toBe(403);
    expect(outside.body.detail).toMatch(
      /^worker_id: the worker credential "worker ci-\*" registers "ci-\*" only/,
    );

    const forged = await refusedHandshake(workerSocketUrl(app.baseUrl, 'ci-8'), {
      Authorization: `Bearer ${pool.credential.slice(0, -4)}AAAA`,
    });
    expect(forged.status).toBe(401);
  });

  it('is made by admins only, shown once, listed without the secret, revocable, and audited', async () => {
    const refused = await member.post('/worker-credentials', {
      name: 'mine',
      worker_id: 'team-box',
    });
    expect(refused.status).toBe(403);
    const invalid = await api.post('/worker-credentials', { name: 'bad', worker_id: '*' });
    expect(invalid.status).toBe(400);
    expect(invalid.body.detail).toMatch(/^worker_id: a pool needs a prefix/);
    const reserved = await api.post('/worker-credentials', { name: 'bad', worker_id: 'warp-1' });
    expect(reserved.status).toBe(400);
    expect(reserved.body.detail).toMatch(/^worker_id: ids starting with "warp" are reserved/);
    expect((await member.get('/worker-credentials')).status).toBe(403);

    const made = await credentialFor('revoked-box');
    const listed = await api.get('/worker-credentials');
    expect(listed.status).toBe(200);
    const entry = (listed.body.worker_credentials as Record<string, unknown>[]).find(
      (c) => c.id === made.id,
    );
    expect(entry).toMatchObject({
      worker_id: 'revoked-box',
      prefix: made.prefix,
      revoked_at: null,
    });
    expect(JSON.stringify(listed.body)).not.toContain(made.credential);

    const { worker, harness } = await offeredRun(made.credential, 'revoked-box');
    expect((await harness('start')).status).toBe(200);

    expect((await api.delete(`/worker-credentials/${made.id}`)).status).toBe(204);
    await worker.whenClosed(15_000);
    expect(worker.closeCode).toBe(1008);
    // The revoked worker's execution can no longer fetch or report anything for the run.
    expect((await harness('heartbeat')).status).toBe(401);
    const after = await refusedHandshake(workerSocketUrl(app.baseUrl, 'revoked-box'), {
      Authorization: `Bearer ${made.credential}`,
    });
    expect(after.status).toBe(401);
    expect((await api.delete('/worker-credentials/Zz0000000000000000000z')).status).toBe(404);

    const audit = await api.get(`/audit-events?target_type=worker_credential`);
    expect(audit.status).toBe(200);
    const actions = (audit.body.events as { action: string; target: { id: string } }[])
      .filter((e) => e.target.id === made.id)
      .map((e) => e.action);
    expect(actions.sort()).toEqual(['worker_credential.create', 'worker_credential.revoke']);
  });

  it('revokes the run keys a worker holds when its credential is revoked after it disconnected', async () => {
    const made = await credentialFor('gone-box');
    const { worker, held, harness } = await offeredRun(made.credential, 'gone-box');
    worker.send('task_claimed', { task_id: held });
    await waitFor(
      async () => (await api.get(`/agent/runs/${held}`)).body.state as string,
      (state) => state === 'CLAIMED',
      { what: 'the worker to claim the run' },
    );
    expect((await harness('start')).status).toBe(200);

    // The worker's socket is gone (its execution goes on over HTTP with the run key) before an
    // admin revokes its credential: no connection is left for the gateway to close.
    worker.close();
    await waitFor(
      async () =>
        (
          (await api.get('/agent/connected-self-hosted-workers')).body.workers as {
            worker_host: string;
          }[]
        ).some((w) => w.worker_host === 'gone-box'),
      (connected) => !connected,
      { what: "the server to drop the worker's connection" },
    );
    expect((await harness('heartbeat')).status).toBe(200);
    expect((await api.delete(`/worker-credentials/${made.id}`)).status).toBe(204);
    expect((await harness('heartbeat')).status).toBe(401);
  });
});
