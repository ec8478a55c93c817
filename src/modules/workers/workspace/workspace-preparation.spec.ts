import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bareRepo } from '../../../../test/support/git-repos';
import type { AppConfig } from '../../../config/app-config';
import { WorkspaceService } from './workspace.service';
import { openProcessSandbox } from '../sandbox/backends/process/process-sandbox';
import type { Sandbox } from '../sandbox/sandbox.types';
import { prepareWorkspace, SetupPlan, WorkspaceSnapshots } from './workspace-preparation';
import { SnapshotStore } from './snapshot-store';

describe('prepareWorkspace', () => {
  let root: string;
  let gitRoot: string;
  let workspaces: WorkspaceService;
  let events: [string, Record<string, unknown> | undefined][];

  beforeAll(() => {
    gitRoot = mkdtempSync(join(tmpdir(), 'ambient-prep-git-'));
    bareRepo(gitRoot, 'acme', 'web', { 'README.md': 'hi\n' });
  });
  afterAll(() => rmSync(gitRoot, { recursive: true, force: true }));

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'ambient-prep-ws-'));
    workspaces = new WorkspaceService({ runs: { workspaceRoot: root } } as AppConfig);
    events = [];
  });
  /** The sandboxes `prepare` opened: closed after each test (each has a private directory). */
  const opened: Sandbox[] = [];
  afterEach(async () => {
    for (const sandbox of opened.splice(0)) await sandbox.close();
    rmSync(root, { recursive: true, force: true });
  });

  const plan = (over: Partial<SetupPlan> = {}): SetupPlan => ({
    environmentId: 'env-1',
    repos: [{ owner: 'acme', repo: 'web' }],
    setupCommands: ['echo "$TOOL_TOKEN" > token.txt'],
    timeoutMs: 10_000,
    gitUrlBase: gitRoot,
    gitToken: null,
    env: { TOOL_TOKEN: 't0k' },
    ...over,
  });
  const prepare = async (
    loadPlan: () => Promise<SetupPlan | null>,
    signal = new AbortController().signal,
    snapshots?: WorkspaceSnapshots,
    runId = 'run-1',
  ) => {
    const sandbox = await openProcessSandbox(workspaces.dirFor(runId));
    opened.push(sandbox);
    return prepareWorkspace({
      runId,
      snapshots,
      sandbox,
      environmentId: 'env-1',
      workspaces,
      signal,
      emit: async (type, payload) => void events.push([type, payload]),
      loadPlan,
    });
  };

  it('clones, runs the commands with the plan’s variables, and is done once per run', async () => {
    expect(await prepare(async () => plan())).toBeNull();
    const dir = workspaces.dirFor('run-1');
    expect(readFileSync(join(dir, 'web', 'README.md'), 'utf8')).toBe('hi\n');
    expect(readFileSync(join(dir, 'token.txt'), 'utf8')).toBe('t0k\n');
    expect(events.map(([type]) => type)).toEqual([
      'environment_setup_started',
      'repository_cloned',
      'setup_command_started',
      'setup_command_succeeded',
      'worker_container_ready',
    ]);
    const step = { index: 0, command: plan().setupCommands[0], command_id: expect.any(String) };
    expect(events[2][1]).toEqual(step);
    expect(events[3][1]).toEqual({ ...step, duration_ms: expect.any(Number) });
    expect(events[3][1]?.command_id).toBe(events[2][1]?.command_id);

    writeFileSync(join(dir, 'work.txt'), 'in progress');
    const loadPlan = jest.fn(async () => plan());
    expect(await prepare(loadPlan)).toBeNull();
    expect(loadPlan).not.toHaveBeenCalled();
    expect(existsSync(join(dir, 'work.txt'))).toBe(true);
  });

  it('says which step failed, with its exit code and last output lines, and starts over next time', async () => {
    const failed = await prepare(async () =>
      plan({ setupCommands: ['echo one; echo two >&2; exit 4'] }),
    );
    expect(failed).toEqual({
      message:
        'environment setup failed: setup command 1 (echo one; echo two >&2; exit 4) exited with code 4\none\ntwo',
      exitCode: 4,
    });
    // The timeline has the failed step, red in the console: its output live, then how it ended.
    const [started, ...rest] = events.filter(([type]) => type.startsWith('setup_command_'));
    const commandId = started[1]?.command_id;
    expect(events.filter(([type]) => type === 'command_output').map(([, p]) => p)).toEqual([
      { command_id: commandId, seq: 0, text: 'one\ntwo\n' },
    ]);
    expect(rest).toEqual([
      [
        'setup_command_failed',
        {
          index: 0,
          command: 'echo one; echo two >&2; exit 4',
          command_id: commandId,
          exit_code: 4,
          timed_out: false,
          output_tail: 'one\ntwo',
          duration_ms: expect.any(Number),
        },
      ],
    ]);
    expect(await prepare(async () => plan({ setupCommands: [] }))).toBeNull();
    expect(events.filter(([type]) => type === 'environment_setup_started')).toHaveLength(2);
  });

  it('refuses a missing environment and unsafe repository names without running anything', async () => {
    expect(await prepare(async () => null)).toEqual({
      message: 'environment "env-1" no longer exists',
      exitCode: null,
    });
    const unsafe = await prepare(async () => plan({ repos: [{ owner: '..', repo: 'web' }] }));
    expect(unsafe).toEqual({ message: 'invalid repository ../web', exitCode: null });
    expect(events.at(-1)).toEqual([
      'repository_clone_failed',
      { owner: '..', repo: 'web', error: 'invalid repository name' },
    ]);
    expect(existsSync(join(workspaces.dirFor('run-1'), 'token.txt'))).toBe(false);
  });

  it('stops at once when aborted', async () => {
    const controller = new AbortController();
    controller.abort('cancelled');
    const failed = await prepare(async () => plan({ repos: [] }), controller.signal);
    expect(failed?.exitCode).toBeNull();
    expect(existsSync(join(workspaces.dirFor('run-1'), 'token.txt'))).toBe(false);
    // Stopped is not failed: the run's own end says it was cancelled.
    expect(events.map(([type]) => type)).not.toContain('setup_command_failed');
  });

  it('records a clone that failed with its repository, exit code and last output', async () => {
    const failed = await prepare(async () => plan({ repos: [{ owner: 'acme', repo: 'gone' }] }));
    expect(failed?.message).toContain('cloning acme/gone exited with code 128');
    expect(events.at(-1)).toEqual([
      'repository_clone_failed',
      {
        owner: 'acme',
        repo: 'gone',
        exit_code: 128,
        timed_out: false,
        output_tail: expect.stringContaining('gone'),
      },
    ]);
  });

  describe('with snapshots', () => {
    const snapshotsBy = (key: (plan: SetupPlan) => string | null): WorkspaceSnapshots => {
      const store = new SnapshotStore(join(root, '.snapshots'), {
        maxBytesPerTeam: 1e9,
        maxAgeMs: 3_600_000,
      });
      return {
        keyFor: async (p) => key(p),
        restore: (k, dir) => store.restore('team-1', 'env-1', k, dir),
        keep: (k, dir) => store.keep('team-1', 'env-1', k, dir),
      };
    };
    const keyOf = (p: SetupPlan) =>
      p.setupCommands.join('\n') === 'x' ? 'f'.repeat(64) : 'e'.repeat(64);

    it('keeps a successful setup and starts the next run from it, without setting up', async () => {
      const snapshots = snapshotsBy(keyOf);
      const counting = plan({ setupCommands: ['echo run >> setup.log'] });
      expect(await prepare(async () => counting, undefined, snapshots, 'run-1')).toBeNull();
      events = [];
      expect(await prepare(async () => counting, undefined, snapshots, 'run-2')).toBeNull();
      expect(events.map(([type]) => type)).toEqual(['setup_cached', 'worker_container_ready']);
      expect(events[0][1]).toEqual({ environment_id: 'env-1' });
      const dir = workspaces.dirFor('run-2');
      expect(readFileSync(join(dir, 'setup.log'), 'utf8')).toBe('run\n');
      expect(readFileSync(join(dir, 'web', 'README.md'), 'utf8')).toBe('hi\n');

      // Another key (here: other setup commands) sets up again.
      events = [];
      expect(
        await prepare(async () => plan({ setupCommands: ['x'] }), undefined, snapshots, 'run-3'),
      ).not.toBeNull();
      expect(events.map(([type]) => type)).toContain('environment_setup_started');
    });

    it('sets up without a key, and keeps no failed setup', async () => {
      const noKey = snapshotsBy(() => null);
      expect(await prepare(async () => plan(), undefined, noKey, 'run-1')).toBeNull();
      expect(existsSync(join(root, '.snapshots'))).toBe(false);
      const snapshots = snapshotsBy(keyOf);
      const failing = plan({ setupCommands: ['echo half > half.txt; exit 1'] });
      expect(await prepare(async () => failing, undefined, snapshots, 'run-2')).not.toBeNull();
      events = [];
      await prepare(async () => failing, undefined, snapshots, 'run-3');
      expect(events.map(([type]) => type)).not.toContain('setup_cached');
    });

    it('keeps no git credential: the token never lands in the clone’s .git/config', async () => {
      expect(await prepare(async () => plan({ gitToken: 'tok-s3cret' }))).toBeNull();
      const config = readFileSync(
        join(workspaces.dirFor('run-1'), 'web', '.git', 'config'),
        'utf8',
      );
      expect(config).not.toContain('tok-s3cret');
      expect(config).not.toContain(Buffer.from('x-access-token:tok-s3cret').toString('base64'));
    });
  });
});
