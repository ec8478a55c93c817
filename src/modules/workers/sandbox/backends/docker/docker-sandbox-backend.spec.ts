import type Dockerode from 'dockerode';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../../../../config/app-config';
import type { SandboxPoolMetrics, SandboxSpec } from '../../sandbox.types';
import { ContainerReturns } from './container-returns';
import { DockerSandboxBackend } from './docker-sandbox';
import type { DockerSandbox } from './docker-sandbox-instance';
import type { DirIdentity } from './sandbox-dirs';
import { WarmContainers, type HandedOut, type WarmContainer } from './warm-containers';

const settings = loadConfig({
  AMBIENT_CONFIG_FILE: 'config/default.yaml',
  AMBIENT_SANDBOX: 'docker',
  AMBIENT_DOCKER_POOL_SIZE: '2',
  AMBIENT_DOCKER_POOL_MAX: '2',
}).sandbox;
const IMAGE = settings.docker.defaultImage;

/** A container that only says it was killed and removed. */
function fakeContainer(id: string) {
  return {
    id,
    kill: jest.fn(() => Promise.resolve()),
    remove: jest.fn(() => Promise.resolve()),
  };
}

/**
 * The docker backend with its warm pool on a daemon nobody talks to: WarmContainers makes,
 * discards, hands out and starts numbered fake containers (`make` decides each make's fate), and
 * a closed sandbox's container is eligible to come back (ContainerReturns' steps are fakes).
 */
function backendOf(
  root: string,
  make: (n: number) => Promise<void> = () => Promise.resolve(),
  metrics?: SandboxPoolMetrics,
) {
  const containers: ReturnType<typeof fakeContainer>[] = [];
  const discarded: string[] = [];
  let made = 0;
  const makes = jest
    .spyOn(WarmContainers.prototype, 'make')
    .mockImplementation(async (): Promise<WarmContainer> => {
      const n = ++made;
      await make(n);
      const container = fakeContainer(`c${n}`);
      containers.push(container);
      const privateDir = join(root, '.sandbox', `ambient-pool-${n}`);
      return {
        container: container as unknown as Dockerode.Container,
        pid: 1000 + n,
        init: null,
        limits: { memoryMb: settings.memoryMb, pids: settings.pids, cpus: settings.cpus },
        slot: {
          name: `ambient-pool-${n}`,
          privateDir,
          launchFifo: null,
          workspace: `${privateDir}.workspace`,
        },
        forwarder: null,
        layer: null,
      };
    });
  jest.spyOn(WarmContainers.prototype, 'discard').mockImplementation((warm) => {
    discarded.push(warm.container.id);
    return Promise.resolve();
  });
  jest
    .spyOn(WarmContainers.prototype, 'handOut')
    .mockImplementation(
      (pool, spec: SandboxSpec, image: string, _workspace, _user, comesBack = false) => {
        const warm = pool.take(image, () => comesBack);
        if (!warm) return Promise.resolve(null);
        const handedOut: HandedOut = {
          ...warm,
          limited: Promise.resolve(true),
          bound: {} as DirIdentity,
          runLimits: spec.limits,
          lent: comesBack,
        };
        return Promise.resolve(handedOut);
      },
    );
  jest.spyOn(WarmContainers.prototype, 'start').mockImplementation((warm) =>
    Promise.resolve({
      container: warm.container,
      bridge: null,
      proxyForwarder: null,
      init: null,
      privateDir: warm.slot.privateDir,
    }),
  );
  jest.spyOn(ContainerReturns, 'eligible').mockReturnValue(true);
  const vacate = jest
    .spyOn(ContainerReturns.prototype, 'vacate')
    .mockResolvedValue({ check: { processes: 2, limitHits: 0, leftovers: 0 } });
  jest
    .spyOn(ContainerReturns.prototype, 'refit')
    .mockImplementation((_started, warm) => Promise.resolve(warm));
  const backend = new DockerSandboxBackend(
    settings,
    { modem: {} } as unknown as Dockerode,
    'test',
    { workspaceRoot: root, drainWaitMs: 5000, metrics },
  );
  return { backend, pool: backend.pool!, makes, containers, discarded, vacate };
}

/** The fakes' makes settle at once: the pool is full after a few turns of the event loop. */
async function poolFilled(pool: { readyCount(image: string): number }): Promise<void> {
  for (let turn = 0; pool.readyCount(IMAGE) < 2; turn++) {
    if (turn > 1000) throw new Error(`the pool holds ${pool.readyCount(IMAGE)} of 2`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

function specOf(root: string, runId: string): SandboxSpec {
  return {
    runId,
    executionId: 1,
    teamId: 'team',
    workspaceDir: join(root, runId),
    image: null,
    network: 'none',
    limits: { memoryMb: settings.memoryMb, pids: settings.pids, cpus: settings.cpus },
  };
}

describe('DockerSandboxBackend', () => {
  let root: string;

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'ambient-docker-backend-'));
  });

  afterEach(async () => {
    jest.useRealTimers();
    jest.restoreAllMocks();
    await rm(root, { recursive: true, force: true });
  });

  describe('at shutdown', () => {
    it('stops the warm pool and removes its idle containers as the shutdown begins, before its drain', async () => {
      jest.useFakeTimers();
      // The second make fails: the pool would try again 5 s later.
      const { backend, pool, makes, discarded } = backendOf(root, (n) =>
        n === 2 ? Promise.reject(new Error('the daemon is busy')) : Promise.resolve(),
      );
      backend.warm();
      await jest.advanceTimersByTimeAsync(0);
      expect(makes).toHaveBeenCalledTimes(2);
      expect(pool.readyCount(IMAGE)).toBe(1);

      backend.stopWarming();
      await jest.advanceTimersByTimeAsync(0);
      expect(discarded).toEqual(['c1']);
      expect(pool.readyCount(IMAGE)).toBe(0);

      // Its retry and its periodic looks come and go while the runs drain: it makes nothing.
      await jest.advanceTimersByTimeAsync(65_000);
      expect(pool.take(IMAGE)).toBeNull();
      expect(makes).toHaveBeenCalledTimes(2);
      expect(pool.readyCount(IMAGE)).toBe(0);

      await expect(backend.drain()).resolves.toBe(true);
      expect(discarded).toEqual(['c1']);
      expect(makes).toHaveBeenCalledTimes(2);
    });

    it('removes the container of a sandbox closed during the drain instead of pooling it', async () => {
      const { backend, pool, containers, discarded, vacate } = backendOf(root);
      backend.warm();
      await poolFilled(pool);
      const sandbox = await backend.open(specOf(root, 'run-1'));
      const [handedOut] = containers;
      expect(pool.readyCount(IMAGE)).toBeLessThan(2);

      backend.stopWarming();
      // The run ends while the runs drain: its container neither comes back nor stays.
      await sandbox.close();
      await expect(backend.drain()).resolves.toBe(true);
      expect(vacate).not.toHaveBeenCalled();
      expect(pool.readyCount(IMAGE)).toBe(0);
      expect(handedOut.kill).toHaveBeenCalled();
      expect(handedOut.remove).toHaveBeenCalledWith({ force: true, v: true });
      expect(discarded).not.toContain(handedOut.id);
      // The pool's idle ones went with its early stop.
      expect(discarded.length + 1).toBe(containers.length);
    });
  });

  describe('closing a sandbox', () => {
    it('ends the close of a sandbox whose container the daemon does not kill within 10 s', async () => {
      const { backend, pool, containers } = backendOf(root);
      backend.warm();
      await poolFilled(pool);
      const sandbox = await backend.open(specOf(root, 'run-1'));
      // Not given back: its container is killed and removed (see the shutdown cases above).
      backend.stopWarming();
      const [handedOut] = containers;
      handedOut.kill.mockReturnValue(new Promise(() => undefined));
      jest.useFakeTimers({ doNotFake: ['setImmediate'] });

      let closed = false;
      const closing = sandbox.close().then(() => (closed = true));
      // The close asks the daemon once it found no killer to tell (a look at the file system).
      for (let turn = 0; handedOut.kill.mock.calls.length === 0; turn++) {
        if (turn > 1000) throw new Error('the close never asked the daemon to kill the container');
        await new Promise((resolve) => setImmediate(resolve));
      }
      await jest.advanceTimersByTimeAsync(9_999);
      expect(closed).toBe(false);
      await jest.advanceTimersByTimeAsync(1);
      await closing;
    });
  });

  describe('hand-outs', () => {
    it('reports a hand-out whose container never became ready, with its wait, apart from the ready ones', async () => {
      const metrics = { handout: jest.fn(), handoutFailed: jest.fn() };
      const { backend, pool } = backendOf(root, undefined, metrics);
      backend.warm();
      await poolFilled(pool);
      jest
        .spyOn(WarmContainers.prototype, 'start')
        .mockRejectedValueOnce(new Error('its launcher did not start'));

      const failed = (await backend.open(specOf(root, 'run-1'))) as DockerSandbox;
      expect(await failed.started).toBe(false);
      await failed.close();
      await new Promise((resolve) => setImmediate(resolve));
      expect(metrics.handoutFailed).toHaveBeenCalledWith('hit', expect.any(Number));
      expect(metrics.handout).not.toHaveBeenCalled();
      await backend.drain();
    });
  });
});
