import type { FakeStep } from './fixtures/fake-model-server';
import { useTestApp } from './support/use-test-app';
import { waitFor } from './support/wait';

/** The run's own rule: the agent asks before it deploys. */
const ASK_BEFORE_DEPLOY = { approvals: [{ command: 'deploy', effect: 'ask' }] };
const DEPLOY: FakeStep = {
  toolCalls: [{ name: 'run_command', arguments: { command: 'echo deploy' } }],
};
/** Long enough for a sandbox on a machine running other suites. */
const SLOW = { timeoutMs: 120_000 };

/**
 * A BLOCKED run holds no concurrency slot (api + worker, the built-in harness): a run waiting at
 * the team's limit starts when the running one asks for approval, a new run is not at capacity
 * beside a blocked one, and the blocked run, once approved, takes a slot again and finishes.
 */
describe('approvals: a BLOCKED run frees its concurrency slot (api + worker)', () => {
  const { api, model } = useTestApp('approvals_capacity', ['api', 'worker'], {
    // No sweeper to fall back on: the waiting run must be started by the slot freeing.
    'runs.dispatchSweepIntervalMs': 3_600_000,
  });

  const state = (runId: string) => api.runState(runId);
  const reached = (runId: string, wanted: string, what: string) =>
    waitFor(
      () => state(runId),
      (s) => s === wanted || ['FAILED', 'ERROR', 'CANCELLED'].includes(s),
      { ...SLOW, what },
    );
  const create = async (script: string, steps: FakeStep[], config?: Record<string, unknown>) => {
    model.script(script, steps);
    const res = await api.post('/agent/runs', { prompt: `Go [script:${script}]`, config });
    expect(res.status).toBe(200);
    return res.body as { run_id: string; at_capacity: boolean };
  };

  it('a run waiting at max_concurrent_runs starts when the running one blocks', async () => {
    expect((await api.put('/limits', { max_concurrent_runs: 1 })).status).toBe(200);
    // The first run holds its slot, INPROGRESS at its model call, until the test opens the gate.
    const asking = await create(
      'asks',
      [{ gate: 'may-ask', then: DEPLOY }, { text: 'Deployed.' }],
      ASK_BEFORE_DEPLOY,
    );
    await waitFor(() => Promise.resolve(model.requests.some((r) => r.script === 'asks')), Boolean, {
      ...SLOW,
      what: 'the first run to call the model',
    });
    const waiting = await create('waits', [{ text: 'Started once the other blocked.' }]);
    expect(waiting.at_capacity).toBe(true);
    expect(await state(waiting.run_id)).toBe('QUEUED');

    model.open('may-ask');
    expect(await reached(asking.run_id, 'BLOCKED', 'the first run to ask')).toBe('BLOCKED');
    expect(await reached(waiting.run_id, 'SUCCEEDED', 'the waiting run to run')).toBe('SUCCEEDED');

    const beside = await create('beside', [{ text: 'No wait.' }]);
    expect(beside.at_capacity).toBe(false);
    expect(await reached(beside.run_id, 'SUCCEEDED', 'a run beside the blocked one')).toBe(
      'SUCCEEDED',
    );
    expect(await state(asking.run_id)).toBe('BLOCKED');

    const [request] = (await api.get(`/agent/runs/${asking.run_id}/approvals`)).body.approvals;
    expect(request).toMatchObject({ tool: 'run_command', arguments: { command: 'echo deploy' } });
    const approved = await api.post(`/agent/runs/${asking.run_id}/approvals/${request.id}`, {
      decision: 'approve',
    });
    expect(approved.body.run_state).toBe('QUEUED');
    expect(await reached(asking.run_id, 'SUCCEEDED', 'the approved run to finish')).toBe(
      'SUCCEEDED',
    );
  });
});
