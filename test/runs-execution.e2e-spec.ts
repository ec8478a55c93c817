import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeModelServer, startFakeModelServer } from './fixtures/fake-model-server';
import { apiClient } from './support/api-client';
import { createTestEnvironment, startTestApp, TestApp, TestEnvironment } from './support/test-app';
import { waitFor } from './support/wait';

describe('run execution end to end (api + worker, fake model server)', () => {
  let model: FakeModelServer;
  let env: TestEnvironment;
  let app: TestApp;
  let api: ReturnType<typeof apiClient>;

  beforeAll(async () => {
    model = await startFakeModelServer();
    env = createTestEnvironment('execution', model.url);
    // $3600 an hour is a dollar a second: any execution's compute cost shows at 6 decimals.
    app = await startTestApp(env, ['api', 'worker'], { 'runs.computeCostPerHourUsd': 3600 });
    api = apiClient(app.baseUrl, app.apiKey);
  });

  afterAll(async () => {
    await app?.close();
    await env?.destroy();
    await model?.close();
  });

  const finished = (runId: string, states = ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED']) =>
    waitFor(
      async () => (await api.get(`/agent/runs/${runId}`)).body,
      (run) => states.includes(run.state),
      { what: `run ${runId} to finish` },
    );

  it("runs an agent on an Anthropic model through the Messages API, conversation in Oz's shape", async () => {
    model.script('claude-edit', [
      { toolCalls: [{ name: 'write_file', arguments: { path: 'notes.md', content: 'hi\n' } }] },
      { text: 'Wrote notes.md.' },
    ]);
    const created = await api.post('/agent/runs', {
      prompt: 'Take notes [script:claude-edit]',
      config: { model_id: 'fake-claude' },
    });
    const run = await finished(created.body.run_id);
    expect(run.state).toBe('SUCCEEDED');
    expect(run.status_message).toEqual({ message: 'Wrote notes.md.' });
    expect(readFileSync(join(env.workspaceRoot, run.run_id, 'notes.md'), 'utf8')).toBe('hi\n');
    const calls = model.requests.filter((r) => r.script === 'claude-edit');
    expect(calls.map((r) => [r.api, r.body.model, r.body.max_tokens])).toEqual([
      ['messages', 'fake-claude', 512],
      ['messages', 'fake-claude', 512],
    ]);
    // Priced with the model's own rates: 10 + 30 prompt tokens at $3/M, 10 completion at $15/M.
    expect(run.request_usage.inference_cost_usd).toBeCloseTo(40 * 3e-6 + 10 * 15e-6, 8);
    const conversation = (await api.get(`/agent/runs/${run.run_id}/conversation`)).body;
    const blocks = conversation.steps[0].messages.flatMap(
      (m: { content: { type: string; category?: string }[] }) => m.content,
    );
    expect(blocks).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'action', category: 'files' }),
        expect.objectContaining({ type: 'action_result', category: 'files' }),
      ]),
    );
  });

  it('runs a tool-using agent to SUCCEEDED and records usage, times and the timeline', async () => {
    model.script('write-file', [
      {
        toolCalls: [
          { name: 'run_command', arguments: { command: 'echo hello > out.txt && cat out.txt' } },
        ],
      },
      { text: 'I wrote out.txt.' },
    ]);
    const created = await api.post('/agent/runs', { prompt: 'Write a file [script:write-file]' });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({
      run_id: expect.any(String),
      task_id: created.body.run_id,
      state: 'QUEUED',
      at_capacity: false,
    });
    const run = await finished(created.body.run_id);
    expect(run.state).toBe('SUCCEEDED');
    expect(run.status_message).toEqual({ message: 'I wrote out.txt.' });
    expect(readFileSync(join(env.workspaceRoot, run.run_id, 'out.txt'), 'utf8')).toBe('hello\n');
    expect(new Date(run.started_at).getTime()).toBeLessThanOrEqual(
      new Date(run.finished_at).getTime(),
    );
    expect(run.run_time).toMatch(/^PT\d+(\.\d+)?S$/);
    expect(run.executions).toBe(1);
    // Two model calls: prompt tokens 10 per message, 5 completion tokens each (fake server).
    expect(run.request_usage.total_tokens).toBeGreaterThan(0);
    expect(run.request_usage.inference_cost_usd).toBeGreaterThan(0);
    expect(run.request_usage.model_token_usage[0]).toMatchObject({ model_id: 'fake-model' });
    // Compute is billed for the execution's wall time, which fits between the run's timestamps.
    const wallSeconds =
      (new Date(run.finished_at).getTime() - new Date(run.started_at).getTime()) / 1000;
    expect(run.request_usage.compute_cost_usd).toBeGreaterThan(0);
    expect(run.request_usage.compute_cost_usd).toBeLessThanOrEqual(wallSeconds + 0.01);
    expect(run.request_usage.compute_cost).toBe(run.request_usage.compute_cost_usd);

    const toolResult = model.requests
      .filter((r) => r.script === 'write-file')
      .at(-1)!
      .body.messages.find((m) => m.role === 'tool');
    expect(String(toolResult?.content)).toContain('hello');

    const timeline = await api.get(`/agent/runs/${run.run_id}/timeline`);
    expect(timeline.body.events.map((e: { event_type: string }) => e.event_type)).toEqual([
      'oz_run_created',
      'oz_run_claimed',
      'agent_started',
      'command_started',
      'command_output',
      'command_finished',
      'oz_run_done',
    ]);
    expect(timeline.body.events[1]).toMatchObject({ run_id: run.run_id, execution_id: 1 });
    // The command's start, its output as it came, and its end, tied by one command id.
    const [started, output, ended] = timeline.body.events.slice(3, 6);
    const commandId = started.payload.command_id as string;
    expect(started.payload).toEqual({
      command_id: commandId,
      command: 'echo hello > out.txt && cat out.txt',
    });
    expect(output).toMatchObject({
      execution_id: 1,
      payload: { command_id: commandId, seq: 0, text: 'hello\n' },
    });
    expect(ended.payload).toMatchObject({ command_id: commandId, exit_code: 0, timed_out: false });
  });

  it('ends FAILED with the error code when the model provider refuses the key', async () => {
    model.script('refused', [{ status: 401, error: 'invalid api key' }]);
    const created = await api.post('/agent/runs', { prompt: 'Try [script:refused]' });
    const run = await finished(created.body.run_id);
    expect(run.state).toBe('FAILED');
    expect(run.status_message).toMatchObject({
      error_code: 'external_authentication_required',
      retryable: false,
    });
    expect(run.status_message.message).toContain('401');
  });

  it('stops a runaway agent at the turn limit', async () => {
    const loop = Array.from({ length: 60 }, () => ({
      toolCalls: [{ name: 'run_command', arguments: { command: 'true' } }],
    }));
    model.script('runaway', loop);
    await app.close();
    app = await startTestApp(env, ['api', 'worker'], { 'runs.maxTurns': 3 });
    api = apiClient(app.baseUrl, app.apiKey);
    const created = await api.post('/agent/runs', { prompt: 'Loop forever [script:runaway]' });
    const run = await finished(created.body.run_id);
    expect(run.state).toBe('FAILED');
    expect(run.status_message.error_code).toBe('budget_exceeded');
    expect(run.status_message.message).toContain('3');
  });

  it('cancels a run mid-command: the command is killed and the run ends CANCELLED', async () => {
    model.script('slow', [
      {
        toolCalls: [
          {
            name: 'run_command',
            arguments: { command: 'touch started; sleep 30; touch finished' },
          },
        ],
      },
      { text: 'should never get here' },
    ]);
    const created = await api.post('/agent/runs', { prompt: 'Be slow [script:slow]' });
    const runId = created.body.run_id;
    const workspace = join(env.workspaceRoot, runId);
    await waitFor(async () => existsSync(join(workspace, 'started')), Boolean, {
      what: 'the command to start',
    });
    const cancelled = await api.post(`/agent/runs/${runId}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.headers['content-type']).toMatch(/application\/json/);
    expect(cancelled.body).toBe(runId);

    const run = await finished(runId);
    expect(run.state).toBe('CANCELLED');
    expect(run.status_message.message).toMatch(/^Cancelled by/);
    // The harness stopped: no second model call for this run, the command never completed.
    await waitFor(
      async () => (await api.get(`/agent/runs/${runId}`)).body.request_usage,
      (usage) => usage !== undefined,
      { what: 'usage of the cancelled execution to be recorded' },
    );
    expect(model.requests.filter((r) => r.script === 'slow')).toHaveLength(1);
    expect(existsSync(join(workspace, 'finished'))).toBe(false);

    const again = await api.post(`/agent/runs/${runId}/cancel`);
    expect(again.status).toBe(400);
    expect(again.body.type).toMatch(/invalid-request$/);
  });

  it("lets a command finish the run with the execution's own run-scoped key", async () => {
    const finish = JSON.stringify({ success: true, summary: 'Finished from a command.' });
    model.script('finish-task', [
      {
        toolCalls: [
          {
            name: 'run_command',
            arguments: {
              command:
                `curl -sS -X POST "$AMBIENT_API_URL/harness-support/finish-task" ` +
                `-H "Authorization: Bearer $AMBIENT_RUN_KEY" -H "Content-Type: application/json" ` +
                `-d '${finish}' > finish.out; sleep 30; touch finished`,
            },
          },
        ],
      },
      { text: 'the harness kept going' },
    ]);
    const created = await api.post('/agent/runs', { prompt: 'Finish [script:finish-task]' });
    const runId = created.body.run_id;
    const run = await finished(runId);
    expect(run.state).toBe('SUCCEEDED');
    expect(run.status_message).toEqual({ message: 'Finished from a command.' });
    // The worker stopped the harness: the command's sleep was killed, no second model call.
    expect(existsSync(join(env.workspaceRoot, runId, 'finished'))).toBe(false);
    expect(model.requests.filter((r) => r.script === 'finish-task')).toHaveLength(1);
    const timeline = (await api.get(`/agent/runs/${runId}/timeline`)).body.events;
    expect(timeline).toContainEqual(
      expect.objectContaining({
        event_type: 'finish_requested',
        payload: { success: true, summary: 'Finished from a command.' },
      }),
    );
  });

  it('continues an ended run with a follow-up as a new execution of the same run', async () => {
    model.script('two-turns', [{ text: 'first answer' }, { text: 'second answer' }]);
    const created = await api.post('/agent/runs', { prompt: 'Talk [script:two-turns]' });
    const runId = created.body.run_id;
    expect((await finished(runId)).status_message.message).toBe('first answer');

    const followup = await api.post(`/agent/runs/${runId}/followups`, { message: 'and then?' });
    expect(followup.status).toBe(200);
    expect(followup.body).toEqual({
      followup_id: expect.any(String),
      outcome: 'handoff_execution',
    });

    const run = await waitFor(
      async () => (await api.get(`/agent/runs/${runId}`)).body,
      (r) => r.state === 'SUCCEEDED' && r.status_message?.message === 'second answer',
      { what: 'the continuation to finish' },
    );
    expect(run.run_id).toBe(runId);
    const last = model.requests.filter((r) => r.script === 'two-turns').at(-1)!;
    const contents = last.body.messages.map((m) => m.content);
    expect(contents).toEqual(expect.arrayContaining(['first answer', 'and then?']));
    const claims = (await api.get(`/agent/runs/${runId}/timeline`)).body.events.filter(
      (e: { event_type: string }) => e.event_type === 'oz_run_claimed',
    );
    expect(claims.map((e: { execution_id: number }) => e.execution_id)).toEqual([1, 2]);
  });

  it('delivers a follow-up into a live run between turns', async () => {
    model.script('live', [
      {
        toolCalls: [
          {
            name: 'run_command',
            arguments: { command: 'touch waiting; while [ ! -f go ]; do sleep 0.05; done' },
          },
        ],
      },
      { text: 'got it' },
    ]);
    const created = await api.post('/agent/runs', { prompt: 'Wait for me [script:live]' });
    const runId = created.body.run_id;
    const workspace = join(env.workspaceRoot, runId);
    await waitFor(async () => existsSync(join(workspace, 'waiting')), Boolean, {
      what: 'the run to be live',
    });
    const followup = await api.post(`/agent/runs/${runId}/followups`, { message: 'also say hi' });
    expect(followup.body.outcome).toBe('live_session');
    writeFileSync(join(workspace, 'go'), '');
    const run = await finished(runId);
    expect(run.state).toBe('SUCCEEDED');
    const last = model.requests.filter((r) => r.script === 'live').at(-1)!;
    expect(last.body.messages.at(-1)).toMatchObject({ role: 'user', content: 'also say hi' });
  });
});
