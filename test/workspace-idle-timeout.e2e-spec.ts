import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createConnection } from 'mysql2/promise';
import { FakeModelServer, FakeStep, startFakeModelServer } from './fixtures/fake-model-server';
import { apiClient } from './support/api-client';
import { createTestEnvironment, startTestApp, TestApp, TestEnvironment } from './support/test-app';
import { waitFor } from './support/wait';

const WRITE: FakeStep = {
  toolCalls: [{ name: 'write_file', arguments: { path: 'notes.txt', content: 'remember me' } }],
};
const READ: FakeStep = { toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }] };

describe('idle_timeout_minutes: the workspace outlives the execution for follow-ups', () => {
  let model: FakeModelServer;
  let env: TestEnvironment;
  let app: TestApp;
  let api: ReturnType<typeof apiClient>;
  const settings = { 'environments.retentionSweepIntervalMs': 200 };

  beforeAll(async () => {
    model = await startFakeModelServer();
    env = createTestEnvironment('idle_timeout', model.url);
    app = await startTestApp(env, ['api', 'worker'], settings);
    api = apiClient(app.baseUrl, app.apiKey);
  });

  afterAll(async () => {
    await app?.close();
    await env?.destroy();
    await model?.close();
  });

  const endsWith = (runId: string, message: string) =>
    waitFor(
      async () => (await api.get(`/agent/runs/${runId}`)).body,
      (r) => r.state === 'SUCCEEDED' && r.status_message?.message === message,
      { what: `run ${runId} to end with "${message}"` },
    );
  const eventTypes = async (runId: string): Promise<string[]> =>
    (await api.get(`/agent/runs/${runId}/timeline`)).body.events.map(
      (e: { event_type: string }) => e.event_type,
    );
  /** What the model saw as the result of its latest tool call in the script. */
  const lastToolResult = (script: string): string =>
    String(
      model.requests
        .filter((r) => r.script === script)
        .at(-1)!
        .body.messages.filter((m) => m.role === 'tool')
        .at(-1)?.content,
    );
  const retainedUntil = async (runId: string): Promise<Date | null> => {
    const rows = (await app.dataSource.query(
      'SELECT workspace_retained_until AS until FROM runs WHERE id = ?',
      [runId],
    )) as { until: Date | null }[];
    return rows[0].until;
  };

  let runId: string;
  let workspace: string;
  const setupLog = () => readFileSync(join(workspace, 'setup.log'), 'utf8');

  it('continues a follow-up within the window in the same workspace, without preparing it again', async () => {
    const environment = await api.post('/agent/environments', {
      name: 'counted',
      setup_commands: ['echo prepared >> setup.log'],
    });
    model.script('keep', [
      WRITE,
      { text: 'Wrote it.' },
      READ,
      { text: 'Read it.' },
      READ,
      { text: 'Looked again.' },
    ]);
    const created = await api.post('/agent/runs', {
      prompt: 'Take a note [script:keep]',
      config: { environment_id: environment.body.uid },
    });
    runId = created.body.run_id;
    workspace = join(env.workspaceRoot, runId);
    const ended = await endsWith(runId, 'Wrote it.');
    // Unset idle_timeout_minutes means the API default of 10 minutes.
    const until = (await retainedUntil(runId))!.getTime();
    const finishedAt = new Date(ended.finished_at).getTime();
    expect(until - finishedAt).toBeGreaterThan(10 * 60_000 - 5_000);
    expect(until - finishedAt).toBeLessThanOrEqual(10 * 60_000 + 5_000);

    const followup = await api.post(`/agent/runs/${runId}/followups`, {
      message: 'read it back',
    });
    expect(followup.body.outcome).toBe('handoff_execution');
    await endsWith(runId, 'Read it.');
    expect(lastToolResult('keep')).toContain('remember me');
    expect(setupLog()).toBe('prepared\n');
    const events = await eventTypes(runId);
    expect(events.filter((e) => e === 'environment_setup_started')).toHaveLength(1);
    expect(events).not.toContain('workspace_released');
  });

  it('deletes the workspace once the window has passed, across a restart; a later follow-up starts fresh', async () => {
    await app.close();
    // The deadline lives in MySQL: pass it while no Ambient process is running.
    const mysql = await createConnection(env.databaseUrl);
    await mysql.query('UPDATE runs SET workspace_retained_until = ? WHERE id = ?', [
      new Date(Date.now() - 1000),
      runId,
    ]);
    await mysql.end();
    expect(existsSync(workspace)).toBe(true);
    app = await startTestApp(env, ['api', 'worker'], settings);
    api = apiClient(app.baseUrl, app.apiKey);

    // The directory is moved aside inside the release's transaction, before its rows commit.
    const released = await waitFor(
      async () => ({
        exists: existsSync(workspace),
        events: (
          (await api.get(`/agent/runs/${runId}/timeline`)).body.events as {
            event_type: string;
          }[]
        ).filter((e) => e.event_type === 'workspace_released'),
      }),
      ({ exists, events }) => !exists && events.length > 0,
      { what: 'the idle workspace to be deleted and its release recorded' },
    ).then(({ events }) => events);
    expect(released).toEqual([
      expect.objectContaining({ execution_id: 2, payload: { retained_until: expect.any(String) } }),
    ]);
    expect(await retainedUntil(runId)).toBeNull();

    await api.post(`/agent/runs/${runId}/followups`, { message: 'look again' });
    await endsWith(runId, 'Looked again.');
    expect(lastToolResult('keep')).not.toContain('remember me');
    // Prepared again: from the environment's snapshot of the first setup, not the old workspace.
    expect(setupLog()).toBe('prepared\n');
    const events = await eventTypes(runId);
    expect(events.filter((e) => e === 'environment_setup_started')).toHaveLength(1);
    expect(events.filter((e) => e === 'setup_cached')).toHaveLength(1);
  });

  it('with idle_timeout_minutes 0 deletes the workspace as the execution ends', async () => {
    model.script('zero', [WRITE, { text: 'Wrote it.' }, READ, { text: 'Read it.' }]);
    const created = await api.post('/agent/runs', {
      prompt: 'Take a note [script:zero]',
      config: { idle_timeout_minutes: 0 },
    });
    const id = created.body.run_id;
    await endsWith(id, 'Wrote it.');
    // Straight away, without waiting for any sweep: the follow-up must not find the note.
    await api.post(`/agent/runs/${id}/followups`, { message: 'read it back' });
    await endsWith(id, 'Read it.');
    expect(lastToolResult('zero')).not.toContain('remember me');
    expect(lastToolResult('zero')).toMatch(/notes\.txt/);
    const events = await eventTypes(id);
    expect(events.filter((e) => e === 'workspace_released').length).toBeGreaterThanOrEqual(1);
  });

  it.each([61, -1, 1.5])('refuses idle_timeout_minutes %p naming the field', async (value) => {
    const res = await api.post('/agent/runs', {
      prompt: 'x',
      config: { idle_timeout_minutes: value },
    });
    expect(res.status).toBe(400);
    expect(res.body.detail).toContain('config.idle_timeout_minutes');
  });
});
