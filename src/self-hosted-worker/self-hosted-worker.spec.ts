import { resolve } from 'node:path';
import { loadConfig } from '../config/app-config';
import { ExtensionSet } from '../extensions/extension-set';
import type { AmbientExtension } from '../extensions/extension.types';
import { Sandboxes } from '../modules/workers/sandbox/sandboxes';
import { dockerSandboxSettings } from '../../test/support/docker-sandbox';
import { SelfHostedWorker } from './self-hosted-worker';
import type { WorkerOptions } from './worker-options';

const options = (extensions: ExtensionSet): WorkerOptions => ({
  apiUrl: 'http://127.0.0.1:1/api/v1',
  webSocketUrl: 'ws://127.0.0.1:1/api/v1/workers',
  workerId: 'spec',
  credential: 'key',
  maxConcurrentTasks: 0,
  workspaceRoot: '/nonexistent',
  modelsFile: resolve(__dirname, '../../config/models.yaml'),
  vendorClis: { claudeBin: 'claude', codexBin: 'codex', geminiBin: 'gemini' },
  sandbox: dockerSandboxSettings(),
  egress: { allow: '' },
  config: loadConfig({ AMBIENT_CONFIG_FILE: 'config/default.yaml' }),
  extensions,
});

describe('SelfHostedWorker', () => {
  afterEach(() => jest.restoreAllMocks());

  it('removes what its closed sandboxes left (their containers) before it stops', async () => {
    const drain = jest.spyOn(Sandboxes.prototype, 'drain').mockResolvedValue(undefined);
    const worker = new SelfHostedWorker(options(ExtensionSet.of([], {})), () => undefined);
    await worker.shutdown();
    expect(drain).toHaveBeenCalledTimes(1);
  });

  it('inits its extensions (settings from its environment, its log) before connecting, and destroys them when it stops', async () => {
    jest.spyOn(Sandboxes.prototype, 'drain').mockResolvedValue(undefined);
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
      options(ExtensionSet.of([extension], { BOX_TOOLS_LEVEL: '2' })),
      (line) => lines.push(line),
    );
    await worker.start();
    expect(events).toEqual(['init 2 auto']);
    expect(lines).toContain('warning: extension box-tools: ready');
    await worker.shutdown();
    expect(events).toEqual(['init 2 auto', 'destroy']);
  });
});
