import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadConfig } from '../config/app-config';
import { ExtensionSet } from '../extensions/extension-set';
import type { AmbientExtension } from '../extensions/extension.types';
import { Sandboxes } from '../modules/workers/sandbox/sandboxes';
import { startTimeOf } from '../modules/workers/sandbox/backends/docker/pool-owner';
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

  it('sweeps what a killed worker left once, before it connects, keeping a live sibling worker’s', async () => {
    const events: string[] = [];
    type IsLive = (runId: string, executionId: number) => Promise<boolean>;
    const sweep = jest.spyOn(Sandboxes.prototype, 'sweep').mockImplementation(() => {
      events.push('sweep');
      return Promise.resolve(0);
    });
    jest.spyOn(WorkerSocket.prototype, 'start').mockImplementation(() => {
      events.push('connect');
    });
    jest.spyOn(Sandboxes.prototype, 'drain').mockResolvedValue(undefined);
    const worker = new SelfHostedWorker(options(ExtensionSet.of([], {}), root), () => undefined);
    await worker.start();
    expect(events).toEqual(['sweep', 'connect']);
    expect(sweep).toHaveBeenCalledTimes(1);

    // Nothing of a previous process is live, a dead worker's mark included (and it goes).
    const isLive = sweep.mock.calls[0][0] as IsLive;
    const marks = join(root, '.workers');
    writeFileSync(join(marks, `worker.${process.ppid}.1`), '');
    await expect(isLive('run-1', 1)).resolves.toBe(false);
    expect(readdirSync(marks)).toEqual([`worker.${process.pid}.${startTimeOf(process.pid)}`]);
    // Another live worker process of this workspace root: its containers look the same.
    writeFileSync(join(marks, `worker.${process.ppid}.${startTimeOf(process.ppid)}`), '');
    await expect(isLive('run-1', 1)).resolves.toBe(true);

    await worker.shutdown();
    expect(readdirSync(marks)).toEqual([`worker.${process.ppid}.${startTimeOf(process.ppid)}`]);
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
