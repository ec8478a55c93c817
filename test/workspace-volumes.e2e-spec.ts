import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WorkspaceRetentionService } from '../src/modules/workers/workspace/workspace-retention.service';
import { FakeModelServer, FakeStep, startFakeModelServer } from './fixtures/fake-model-server';
import { apiClient } from './support/api-client';
import { createTestEnvironment, startTestApp, TestApp, TestEnvironment } from './support/test-app';
import { waitFor } from './support/wait';

/**
 * Two worker machines, each with its own workspace disk (`AMBIENT_WORKSPACE_VOLUME` vol-a and
 * vol-b), behind one API: a kept workspace is swept only by its own volume, a debug agent runs
 * where the failed workspace is, and directories no run accounts for are removed.
 */
describe('workspace volumes: several worker machines with their own disks', () => {
  let model: FakeModelServer;
  let env: TestEnvironment;
  let apiApp: TestApp;
  let api: ReturnType<typeof apiClient>;
  const roots = { 'vol-a': '', 'vol-b': '' };
  const workers: Partial<Record<keyof typeof roots, TestApp>> = {};

  // Sweeps are slow so each test drives them itself, except the orphan sweep at start.
  const startWorker = async (volume: keyof typeof roots) => {
    workers[volume] = await startTestApp(env, ['worker'], {
      'runs.workspaceVolume': volume,
      'runs.workspaceRoot': roots[volume],
      'environments.retentionSweepIntervalMs': 600_000,
      'environments.orphanSweepIntervalMs': 600_000,
    });
    return workers[volume];
  };
  const stopWorker = async (volume: keyof typeof roots) => {
    await workers[volume]?.close();
    delete workers[volume];
  };
  const retention = (volume: keyof typeof roots) =>
    workers[volume]!.ambient.app.get(WorkspaceRetentionService);

  beforeAll(async () => {
    model = await startFakeModelServer();
    env = createTestEnvironment('volumes', model.url);
    roots['vol-a'] = mkdtempSync(join(tmpdir(), 'ambient-vol-a-'));
    roots['vol-b'] = mkdtempSync(join(tmpdir(), 'ambient-vol-b-'));
    apiApp = await startTestApp(env, ['api']);
    api = apiClient(apiApp.baseUrl, apiApp.apiKey);
  });

  afterEach(async () => {
    await stopWorker('vol-a');
    await stopWorker('vol-b');
  });

  afterAll(async () => {
    await apiApp?.close();
    await env?.destroy();
    await model?.close();
    for (const root of Object.values(roots))
      if (root) rmSync(root, { recursive: true, force: true });
  });

  const run = (runId: string) => api.get(`/agent/runs/${runId}`).then((r) => r.body);
  const ended = (runId: string, state = 'SUCCEEDED') =>
    waitFor(
      () => run(runId),
      (r) => r.state === state,
      { what: `run ${runId} to be ${state}` },
    );
  const kept = async (runId: string) =>
    (
      (await apiApp.dataSource.query(
        `SELECT workspace_retained_until AS until, workspace_volume AS volume FROM runs WHERE id = ?`,
        [runId],
      )) as { until: Date | null; volume: string | null }[]
    )[0];
  /** A run that writes note.txt; `later` scripts what the model does on follow-ups. */
  const writeNoteRun = async (script: string, later: FakeStep[] = []) => {
    model.script(script, [
      { toolCalls: [{ name: 'write_file', arguments: { path: 'note.txt', content: script } }] },
      { text: 'Noted.' },
      ...later,
    ]);
    const created = await api.post('/agent/runs', {
      prompt: `Take a note [script:${script}]`,
      config: { idle_timeout_minutes: 30 },
    });
    expect(created.status).toBe(200);
    await ended(created.body.run_id);
    return created.body.run_id as string;
  };

  it('records the volume of a kept workspace, and only that volume sweeps it', async () => {
    await startWorker('vol-a');
    const runId = await writeNoteRun('sweep-mine');
    expect(await kept(runId)).toMatchObject({ volume: 'vol-a' });
    expect(readFileSync(join(roots['vol-a'], runId, 'note.txt'), 'utf8')).toBe('sweep-mine');

    await startWorker('vol-b');
    await apiApp.dataSource.query('UPDATE runs SET workspace_retained_until = ? WHERE id = ?', [
      new Date(Date.now() - 1000),
      runId,
    ]);
    expect(await retention('vol-b').releaseExpired()).toBe(0);
    expect((await kept(runId)).volume).toBe('vol-a');
    expect(existsSync(join(roots['vol-a'], runId))).toBe(true);

    expect(await retention('vol-a').releaseExpired()).toBe(1);
    expect(await kept(runId)).toEqual({ until: null, volume: null });
    expect(existsSync(join(roots['vol-a'], runId))).toBe(false);
    const timeline = (await api.get(`/agent/runs/${runId}/timeline`)).body.events;
    expect(timeline.map((e: { event_type: string }) => e.event_type)).toContain(
      'workspace_released',
    );
  });

  it('continues a follow-up on another volume afresh; the old directory goes when its machine starts', async () => {
    await startWorker('vol-a');
    const runId = await writeNoteRun('moved', [
      { toolCalls: [{ name: 'list_files', arguments: { path: '.' } }] },
      { text: 'Listed.' },
    ]);
    await stopWorker('vol-a');

    await startWorker('vol-b');
    const followup = await api.post(`/agent/runs/${runId}/followups`, {
      message: 'what is here?',
    });
    expect(followup.body).toMatchObject({ outcome: 'handoff_execution' });
    await waitFor(
      () => run(runId),
      (r) => r.state === 'SUCCEEDED' && r.status_message?.message === 'Listed.',
      { what: 'the follow-up to end on vol-b' },
    );
    const listing = model.requests.filter((r) => r.script === 'moved').at(-1)!.body.messages;
    expect(String(listing.filter((m) => m.role === 'tool').at(-1)?.content)).not.toContain(
      'note.txt',
    );
    expect(await kept(runId)).toMatchObject({ volume: 'vol-b' });
    expect(existsSync(join(roots['vol-b'], runId))).toBe(true);
    expect(existsSync(join(roots['vol-a'], runId))).toBe(true);

    // vol-a's machine comes back: its start-up sweep removes the stale copy, vol-b's stays.
    await startWorker('vol-a');
    await waitFor(
      () => Promise.resolve(existsSync(join(roots['vol-a'], runId))),
      (exists) => !exists,
      { what: "vol-a's stale workspace to be removed" },
    );
    expect(existsSync(join(roots['vol-b'], runId))).toBe(true);
  });

  it('removes what a crash left behind and keeps what a run still needs', async () => {
    await startWorker('vol-a');
    const keptHere = await writeNoteRun('orphans-kept');
    const forgotten = await writeNoteRun('orphans-forgotten');
    await apiApp.dataSource.query(
      'UPDATE runs SET workspace_retained_until = NULL, workspace_volume = NULL WHERE id = ?',
      [forgotten],
    );
    // A run no worker can take stays PENDING: its directory must survive.
    const waiting = await api.post('/agent/runs', {
      prompt: 'wait',
      config: { worker_host: 'nobody-home' },
    });
    const root = roots['vol-a'];
    const unknown = randomUUID();
    const halfDeleted = `${randomUUID()}.released-abc123`;
    for (const dir of [unknown, halfDeleted, waiting.body.run_id, '.skill-cache', 'notes']) {
      mkdirSync(join(root, dir), { recursive: true });
      writeFileSync(join(root, dir, 'file'), 'x');
    }

    expect(await retention('vol-a').removeOrphans()).toBe(3);
    expect(existsSync(join(root, forgotten))).toBe(false);
    expect(existsSync(join(root, unknown))).toBe(false);
    expect(existsSync(join(root, halfDeleted))).toBe(false);
    for (const survivor of [keptHere, waiting.body.run_id, '.skill-cache', 'notes']) {
      expect(existsSync(join(root, survivor))).toBe(true);
    }
    await api.post(`/agent/runs/${waiting.body.run_id}/cancel`, {});
  });

  it('runs the debug agent on the volume that kept the failed workspace', async () => {
    await startWorker('vol-a');
    const environment = await api.post('/agent/environments', {
      name: 'fails-on-a',
      setup_commands: ['echo evidence > setup.log; exit 3'],
      failure_session_retention_minutes: 5,
    });
    const created = await api.post('/agent/runs', {
      prompt: 'the task',
      config: { environment_id: environment.body.uid },
    });
    const runId = created.body.run_id as string;
    await ended(runId, 'FAILED');
    expect(await kept(runId)).toMatchObject({ volume: 'vol-a' });

    // Both machines are up; only vol-a's can reach the workspace.
    await startWorker('vol-b');
    model.script('debug-on-a', [
      { toolCalls: [{ name: 'run_command', arguments: { command: 'cat setup.log' } }] },
      { text: 'Found it.' },
    ]);
    const followup = await api.post(`/agent/runs/${runId}/followups`, {
      message: 'why? [script:debug-on-a]',
    });
    expect(followup.body).toMatchObject({ debug_agent_active: true });
    await waitFor(
      () => run(runId),
      (r) => r.status_message.debug_agent_active === false,
      { what: 'the debug agent to end' },
    );
    const requests = model.requests.filter((r) => r.script === 'debug-on-a');
    const toolResult = requests[1].body.messages.find((m) => m.role === 'tool');
    expect(String(toolResult?.content)).toContain('evidence');
  });
});
