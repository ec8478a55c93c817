import type { FakeModelServer } from '../fixtures/fake-model-server';
import type { apiClient } from './api-client';
import { waitFor } from './wait';

/**
 * Starts a run in `environmentId` whose scripted model calls `run_command` once with `command`,
 * waits for it to succeed, and answers the command's output (as the model got it) and the run's id.
 */
export async function runScriptedCommand(
  options: {
    api: ReturnType<typeof apiClient>;
    model: FakeModelServer;
    environmentId: string;
    /** How long the run may take to end (a sandbox through the egress proxy on a busy machine). */
    timeoutMs: number;
  },
  command: string,
): Promise<{ output: string; runId: string }> {
  const { api, model, environmentId, timeoutMs } = options;
  const script = `cmd-${Math.random().toString(36).slice(2)}`;
  model.script(script, [
    { toolCalls: [{ name: 'run_command', arguments: { command } }] },
    { text: 'done' },
  ]);
  const created = await api.post('/agent/runs', {
    prompt: `[script:${script}]`,
    config: { environment_id: environmentId },
  });
  const runId = created.body.run_id as string;
  const run = await waitFor(
    async () => (await api.get(`/agent/runs/${runId}`)).body,
    (r) => ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(r.state),
    { timeoutMs, what: `run ${runId} to end` },
  );
  expect(run).toMatchObject({ state: 'SUCCEEDED' });
  const [result] = model.requests
    .filter((r) => r.script === script)
    .flatMap((r) => r.body.messages.filter((m) => m.role === 'tool'))
    .map((m) => JSON.parse(String(m.content)) as { output: string });
  return { output: result.output, runId };
}
