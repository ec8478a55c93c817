import { startTestApp, TestApp } from './support/test-app';
import { useTestApp } from './support/use-test-app';
import { waitFor } from './support/wait';

/**
 * An agent identity's approval rules apply to every execution that starts after they changed,
 * whichever replica runs it: each worker caches the identity's approval rules (read at every
 * execution's start) and drops them when another replica announces the change, before that
 * change is answered. Replica A answers the API, replica B executes.
 */
describe("an agent identity's approvals, changed on one replica, executed on another", () => {
  // Long enough that only B's acknowledgement, never the bound, ends A's wait here.
  const settings = { 'redis.cacheAckTimeoutMs': 60_000 };
  const { api, env, model } = useTestApp('identity_approvals', ['api'], settings);
  let worker: TestApp;

  beforeAll(async () => {
    worker = await startTestApp(env, ['worker'], settings);
  });

  afterAll(async () => {
    await worker?.close();
  });

  const runCommandAs = async (uid: string, name: string, command: string) => {
    model.script(name, [
      { toolCalls: [{ name: 'run_command', arguments: { command } }] },
      { text: 'done' },
    ]);
    const created = await api.post('/agent/runs', {
      prompt: `[script:${name}]`,
      agent_identity_uid: uid,
    });
    expect(created.status).toBe(200);
    return created.body.run_id as string;
  };
  const settledState = (runId: string) =>
    waitFor(
      async () => (await api.get(`/agent/runs/${runId}`)).body.state as string,
      (state) => ['SUCCEEDED', 'FAILED', 'ERROR', 'BLOCKED', 'CANCELLED'].includes(state),
      { timeoutMs: 60_000, what: `run ${runId} to settle` },
    );

  it('a rule added on A stops the next execution on B, and one removed lets it run again', async () => {
    const agent = await api.post('/agent/identities', { name: 'Deployer' });
    expect(agent.status).toBe(201);
    const uid = agent.body.uid as string;

    // B reads the identity's settings (no rules) at this execution's start and keeps them.
    expect(await settledState(await runCommandAs(uid, 'free', 'echo free'))).toBe('SUCCEEDED');

    const ruled = await api.put(`/agent/identities/${uid}`, {
      approvals: [{ command: '^echo ', effect: 'ask' }],
    });
    expect(ruled.status).toBe(200);
    const asked = await runCommandAs(uid, 'asked', 'echo asked');
    expect(await settledState(asked)).toBe('BLOCKED');
    const [request] = (await api.get(`/agent/runs/${asked}/approvals`)).body.approvals as {
      arguments: { command: string };
    }[];
    expect(request.arguments.command).toBe('echo asked');
    expect((await api.post(`/agent/runs/${asked}/cancel`, {})).status).toBeLessThan(300);

    expect((await api.put(`/agent/identities/${uid}`, { approvals: [] })).status).toBe(200);
    expect(await settledState(await runCommandAs(uid, 'freed', 'echo freed'))).toBe('SUCCEEDED');
  }, 300_000);
});
