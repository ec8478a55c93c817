import { resolve } from 'node:path';
import { Sandboxes } from '../modules/execution/sandbox/sandboxes';
import { dockerSandboxSettings } from '../../test/support/docker-sandbox';
import { SelfHostedWorker } from './self-hosted-worker';

describe('SelfHostedWorker', () => {
  afterEach(() => jest.restoreAllMocks());

  it('removes what its closed sandboxes left (their containers) before it stops', async () => {
    const drain = jest.spyOn(Sandboxes.prototype, 'drain').mockResolvedValue(undefined);
    const worker = new SelfHostedWorker(
      {
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
      },
      () => undefined,
    );
    await worker.shutdown();
    expect(drain).toHaveBeenCalledTimes(1);
  });
});
