import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadConfig } from '../config/app-config';
import { ExtensionSet } from '../extensions/extension-set';
import type { AmbientExtension } from '../extensions/extension.types';
import { Sandboxes } from '../modules/workers/sandbox/sandboxes';
import { dockerSandboxSettings } from '../../test/support/docker-sandbox';
import { SelfHostedWorker } from './self-hosted-worker';
import type { WorkerOptions } from './worker-options';
import { WorkerSocket } from './worker-socket';

const options = (extensions: ExtensionSet, workspaceRoot = '/nonexistent'): WorkerOptions => ({
  apiUrl: 'http://127.0.0.1:1/api/v1',
  webSocketUrl: 'ws://127.0.0.1:1/api/v1/workers',
  workerId: 'spec',
  credential: 'key',
  maxConcurrentTasks: 0,
  workspaceRoot,
  modelsFile: resolve(__dirname, '../../config/models.yaml'),
  vendorClis: { claudeBin: 'claude', codexBin: 'codex', geminiBin: 'gemini' },
  sandbox: dockerSandboxSettings(),
  egress: { allow: '' },
  config: loadConfig({ AMBIENT_CONFIG_FILE: 'config/default.yaml' }),
  extensions,
});

describe('SelfHostedWorker', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'ambient-self-hosted-'));
  });
  afterEach(() => {
    jest.useRealTimers();
    jest.restoreAllMocks();
    rmSync(root, { recursive: true, force: true });
  });

  it("sweeps what a killed worker left once, before it connects, never taking an execution's container for a dead one's", async () => {
    const events: string[] = [];
    type IsLive = (runId: string, executionId: number) => Promise<boolean>;
    const sweep = jest.spyOn(Sandboxes.prototype, 'sweep').mockImplementation(() => {
      events.push('sweep');
      return Promise.resolve(0);
    });
    jest.spyOn(WorkerSocket.prototype, 'start').mockImplementation(() => {
      events.push('connect');
    });
    const worker = new SelfHostedWorker(options(ExtensionSet.of([], {}), root), () => undefined);
    await worker.start();
    expect(events).toEqual(['sweep', 'connect']);
    expect(sweep).toHaveBeenCalledTimes(1);
    // A sibling sharing this worker id (another workspace root, another host on this daemon)
    // labels its containers alike: none is taken for a killed worker's.
    const isLive = sweep.mock.calls[0][0] as IsLive;
    await expect(isLive('run-1', 1)).resolves.toBe(true);
  });

  it('connects even when the sweep does not end, after waiting 30 s for it', async () => {
    jest.useFakeTimers();
    jest.spyOn(Sandboxes.prototype, 'sweep').mockReturnValue(new Promise(() => undefined));
    const connect = jest.spyOn(WorkerSocket.prototype, 'start').mockImplementation(() => undefined);
    const lines: string[] = [];
    const worker = new SelfHostedWorker(options(ExtensionSet.of([], {}), root), (line) =>
      lines.push(line),
    );
    const starting = worker.start();
    await jest.advanceTimersByTimeAsync(29_000);
    expect(connect).not.toHaveBeenCalled();
    await jest.advanceTimersByTimeAsync(1_000);
    await starting;
    expect(connect).toHaveBeenCalledTimes(1);
    expect(lines).toContain(
      'warning: stopped waiting for the sweep of what a previous worker left',
    );
  });

  it('waits for run cgroups still being removed before it stops, so the exit does not abandon them', async () => {
    jest.spyOn(Sandboxes.prototype, 'drain').mockResolvedValue(undefined);
    let settle!: () => void;
    const removals = new Promise<void>((r) => (settle = r));
    const worker = new SelfHostedWorker(
      options(ExtensionSet.of([], {}), root),
      () => undefined,
      () => removals,
    );
    let stopped = false;
    const shutdown = worker.shutdown().then(() => (stopped = true));
    await new Promise((r) => setTimeout(r, 50));
    expect(stopped).toBe(false);
    settle();
    await shutdown;
    expect(stopped).toBe(true);
  });

  it('stops waiting for a stuck cgroup removal after its bound, saying so', async () => {
    jest.useFakeTimers();
    jest.spyOn(Sandboxes.prototype, 'drain').mockResolvedValue(undefined);
    const lines: string[] = [];
    const worker = new SelfHostedWorker(
      options(ExtensionSet.of([], {}), root),
      (line) => lines.push(line),
      () => new Promise<void>(() => undefined),
    );
    let stopped = false;
    const shutdown = worker.shutdown().then(() => (stopped = true));
    await jest.advanceTimersByTimeAsync(14_000);
    expect(stopped).toBe(false);
    await jest.advanceTimersByTimeAsync(1_000);
    await shutdown;
    expect(lines).toContain(
      'warning: stopped waiting for run cgroups being removed: the next start sweeps them',
    );
  });

  it('removes what its closed sandboxes left (their containers) before it stops', async () => {
    const drain = jest.spyOn(Sandboxes.prototype, 'drain').mockResolvedValue(undefined);
    const worker = new SelfHostedWorker(options(ExtensionSet.of([], {})), () => undefined);
    await worker.shutdown();
    expect(drain).toHaveBeenCalledTimes(1);
  });

  it('inits its extensions (settings from its environment, its log) before connecting, and destroys them when it stops', async () => {
    jest.spyOn(Sandboxes.prototype, 'drain').mockResolvedValue(undefined);
    jest.spyOn(Sandboxes.prototype, 'sweep').mockResolvedValue(0);
    const events: string[] = [];
    const lines: string[] = [];
    const extension: AmbientExtension = {
      name: 'box-tools',
      settings: [{ name: 'BOX_TOOLS_LEVEL', type: 'number', default: 1, description: 'd' }],
      init: ({ settings, log, config }) => {
        events.push(`init ${settings.BOX_TOOLS_LEVEL} ${config.sandbox.backend}`);
        log.warn('ready');
      },
      destroy: () => {
        events.push('destroy');
      },
    };
    const worker = new SelfHostedWorker(
      options(ExtensionSet.of([extension], { BOX_TOOLS_LEVEL: '2' }), root),
      (line) => lines.push(line),
    );
    await worker.start();
    expect(events).toEqual(['init 2 auto']);
    expect(lines).toContain('warning: extension box-tools: ready');
    await worker.shutdown();
    expect(events).toEqual(['init 2 auto', 'destroy']);
  });
});
