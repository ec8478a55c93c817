import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bareRepo } from '../../../../test/support/git-repos';
import type { AppConfig } from '../../../config/app-config';
import { WorkspaceService } from './workspace.service';
import { openProcessSandbox } from '../sandbox/backends/process/process-sandbox';
import { prepareWorkspace, SetupPlan } from './workspace-preparation';

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
  afterEach(() => rmSync(root, { recursive: true, force: true }));

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
  ) =>
    prepareWorkspace({
      runId: 'run-1',
      sandbox: await openProcessSandbox(workspaces.dirFor('run-1')),
      environmentId: 'env-1',
      workspaces,
      signal,
      emit: async (type, payload) => void events.push([type, payload]),
      loadPlan,
    });

  it('clones, runs the commands with the plan’s variables, and is done once per run', async () => {
    expect(await prepare(async () => plan())).toBeNull();
    const dir = workspaces.dirFor('run-1');
    expect(readFileSync(join(dir, 'web', 'README.md'), 'utf8')).toBe('hi\n');
    expect(readFileSync(join(dir, 'token.txt'), 'utf8')).toBe('t0k\n');
    expect(events.map(([type]) => type)).toEqual([
      'environment_setup_started',
      'repository_cloned',
      'setup_command_succeeded',
      'worker_container_ready',
    ]);

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
    expect(existsSync(join(workspaces.dirFor('run-1'), 'token.txt'))).toBe(false);
  });

  it('stops at once when aborted', async () => {
    const controller = new AbortController();
    controller.abort('cancelled');
    const failed = await prepare(async () => plan({ repos: [] }), controller.signal);
    expect(failed?.exitCode).toBeNull();
    expect(existsSync(join(workspaces.dirFor('run-1'), 'token.txt'))).toBe(false);
  });
});
