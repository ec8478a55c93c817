import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiBridge } from '../../api-bridge';
import type { SandboxForwarder } from '../../sandbox-forwarder';
import { BubblewrapSandboxBackend } from './bubblewrap-sandbox';

describe('BubblewrapSandboxBackend.open', () => {
  let root: string;
  const bridges: ApiBridge[] = [];

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'bwrap-open-'));
    await mkdir(join(root, 'workspace'));
  });

  afterEach(async () => {
    jest.restoreAllMocks();
    await Promise.all(bridges.splice(0).map((bridge) => bridge.close()));
    await rm(root, { recursive: true, force: true });
  });

  it('closes the API bridge and removes the private directory when the egress proxy does not listen', async () => {
    const backend = new BubblewrapSandboxBackend({
      readonlyPaths: [],
      privateRoot: join(root, '.sandbox'),
    });
    // Nothing here starts a forwarder or enters a namespace: open fails before either is used.
    const internals = backend as unknown as {
      forwarder: SandboxForwarder | null;
      nsenter: string | null;
    };
    internals.forwarder = { kind: 'socat' } as SandboxForwarder;
    internals.nsenter = '/usr/bin/nsenter';
    const listen = ApiBridge.listen.bind(ApiBridge);
    jest.spyOn(ApiBridge, 'listen').mockImplementation(async (path, apiUrl) => {
      const bridge = await listen(path, apiUrl);
      bridges.push(bridge);
      return bridge;
    });
    const runId = `open-fails-${process.pid}`;

    const opening = backend.open({
      runId,
      executionId: 1,
      teamId: 'team',
      workspaceDir: join(root, 'workspace'),
      image: null,
      network: 'allowlist',
      limits: { memoryMb: 256, pids: 64, cpus: 1 },
      apiUrl: 'http://127.0.0.1:1/api',
      egressProxy: { listen: () => Promise.reject(new Error('proxy cannot listen')) },
    });

    await expect(opening).rejects.toThrow('proxy cannot listen');
    expect(bridges).toHaveLength(1);
    expect((bridges[0] as unknown as { server: Server }).server.listening).toBe(false);
    expect(existsSync(join(root, '.sandbox', `${runId}-1`))).toBe(false);
  });
});
