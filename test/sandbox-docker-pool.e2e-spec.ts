/**
 * The docker backend's warm pool against the real daemon: a pooled container serves one
 * execution at a time and goes back to the pool emptied only when nothing of its run can be left
 * in it (else it is removed), the pool refills (and grows) after a burst, it is drained at
 * shutdown, and the orphan sweep removes the pooled containers of a worker killed by SIGKILL.
 */
import Dockerode from 'dockerode';
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { AmbientMetrics } from '../src/modules/metrics/ambient-metrics';
import {
  DockerSandboxBackend,
  dockerAnswers,
} from '../src/modules/workers/sandbox/backends/docker/docker-sandbox';
import {
  SANDBOX_LABELS,
  SANDBOX_PATH,
  type Sandbox,
  type SandboxHandout,
  type SandboxLimits,
} from '../src/modules/workers/sandbox/sandbox.types';
import { FakeModelServer, startFakeModelServer } from './fixtures/fake-model-server';
import { createTestEnvironment, TestEnvironment } from './support/test-app';
import { settledWithin, waitFor } from './support/wait';
import { spawnAmbient, waitForExit } from './support/worker-process';
import { AGENT_IMAGE, BUILD_AGENT_IMAGE, dockerSandboxSettings } from './support/docker-sandbox';

const CONTAINER_TIMEOUT = { timeoutMs: 60_000, intervalMs: 100 };

const docker = new Dockerode();
/** setxattr(2) and listxattr(2) by number (the agent image is built for this machine's arch). */
const XATTR_SYSCALLS =
  process.arch === 'arm64' ? { setxattr: 5, listxattr: 11 } : { setxattr: 188, listxattr: 194 };
let root: string;
let runs = 0;
const backends: DockerSandboxBackend[] = [];
const opened: Sandbox[] = [];
/** What a test started beside its sandboxes, closed after it. */
const closeAfterTest: (() => Promise<unknown>)[] = [];

interface PoolUnderTest {
  backend: DockerSandboxBackend;
  handouts: SandboxHandout[];
  /** What became of closed sandboxes' containers (see ContainerReturns), in order. */
  returns: string[];
  deployment: string;
  metrics: AmbientMetrics;
}

function poolBackend(
  poolSize: number,
  poolMax: number,
  drainWaitMs?: number,
  poolReuse = true,
): PoolUnderTest {
  const handouts: SandboxHandout[] = [];
  const returns: string[] = [];
  const metrics = new AmbientMetrics();
  const deployment = `pool-test-${process.pid}-${backends.length}`;
  const settings = dockerSandboxSettings({ poolSize, poolMax, poolReuse });
  const backend = new DockerSandboxBackend(settings, docker, deployment, {
    workspaceRoot: root,
    drainWaitMs,
    metrics: {
      handout: (result, seconds) => {
        handouts.push(result);
        metrics.sandboxHandout(result, seconds);
      },
      returned: (outcome) => {
        returns.push(outcome);
        metrics.sandboxReturn(outcome);
      },
    },
  });
  backends.push(backend);
  return { backend, handouts, returns, deployment, metrics };
}

/** Resolves once `count` closed sandboxes' containers were reused or removed; their outcomes. */
function returned(under: PoolUnderTest, count: number): Promise<string[]> {
  return waitFor(
    () => Promise.resolve(under.returns.slice(0, count)),
    (outcomes) => outcomes.length === count,
    { ...CONTAINER_TIMEOUT, what: `${count} containers to be reused or removed` },
  );
}

/** Resolves once the container is gone (the daemon answers 404 for it). */
async function removed(id: string, what: string): Promise<void> {
  await waitFor(
    () =>
      docker
        .getContainer(id)
        .inspect()
        .then(
          () => 200,
          (error: { statusCode?: number }) => error.statusCode,
        ),
    (status) => status === 404,
    { ...CONTAINER_TIMEOUT, what },
  );
}

/** Resolves once the pool of `of` (the default image) holds `ready` containers. */
async function filled(
  backend: DockerSandboxBackend,
  ready: number,
  of = AGENT_IMAGE,
): Promise<void> {
  const pool = backend.pool!;
  while (pool.readyCount(of) < ready) {
    const [image, count] = (await once(pool, 'filled')) as [string, number];
    if (image === of && count >= ready) return;
  }
}

async function open(
  backend: DockerSandboxBackend,
  limits: Partial<SandboxLimits> = {},
  apiUrl: string | null = null,
  snapshotImage: string | null = null,
): Promise<{ sandbox: Sandbox; runId: string; workspace: string }> {
  const runId = `pool-${process.pid}-${++runs}`;
  const workspace = join(root, runId);
  await mkdir(workspace, { recursive: true });
  const sandbox = await backend.open({
    runId,
    executionId: 1,
    teamId: `team-${runs}`,
    workspaceDir: workspace,
    image: null,
    network: 'none',
    limits: { memoryMb: 256, pids: 128, cpus: 1, ...limits },
    apiUrl,
    snapshotImage,
  });
  opened.push(sandbox);
  return { sandbox, runId, workspace };
}

async function sh(sandbox: Sandbox, script: string): Promise<{ code: number | null; out: string }> {
  const child = sandbox.spawn('/bin/sh', ['-c', script], {
    env: { PATH: SANDBOX_PATH, HOME: '/home/agent' },
  });
  const chunks: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
  child.stderr.resume();
  const { code } = await child.exited;
  return { code, out: Buffer.concat(chunks).toString('utf8') };
}

function containersLabelled(labels: Record<string, string>): Promise<Dockerode.ContainerInfo[]> {
  return docker.listContainers({
    all: true,
    filters: { label: Object.entries(labels).map(([name, value]) => `${name}=${value}`) },
  });
}

describe('docker warm pool', () => {
  beforeAll(async () => {
    if (!(await dockerAnswers(docker, 3000))) {
      throw new Error('no docker daemon answers: this test needs one (.ci/run starts dockerd)');
    }
    // Cached by tag: a no-op once the image exists.
    await promisify(execFile)(BUILD_AGENT_IMAGE, ['--tag', AGENT_IMAGE], { maxBuffer: 16 << 20 });
    root = await mkdtemp(join(tmpdir(), 'ambient-pool-'));
  }, 900_000);

  afterEach(async () => {
    await Promise.all(opened.splice(0).map((sandbox) => sandbox.close()));
    await Promise.all(closeAfterTest.splice(0).map((close) => close()));
    await Promise.all(backends.splice(0).map((backend) => backend.drain()));
  });

  afterAll(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('hands a container to one execution only: the next run sees nothing the first left', async () => {
    const { backend, handouts } = poolBackend(1, 1);
    backend.warm();
    await filled(backend, 1);

    const first = await open(backend, { memoryMb: 300, pids: 64 });
    const written = await sh(
      first.sandbox,
      'echo one > /workspace/left.txt && echo one > /tmp/left.txt && echo one > "$HOME/left.txt" && hostname',
    );
    expect(written.code).toBe(0);
    // The run's limits, not the pool's defaults, and no network.
    const inspected = await docker.getContainer(`ambient-${first.runId}-1`).inspect();
    expect(inspected.HostConfig.Memory).toBe(300 * 1024 * 1024);
    // docker-init, the killer and the launcher on top of the run's own.
    expect(inspected.HostConfig.PidsLimit).toBe(64 + 3);
    expect(inspected.HostConfig.NetworkMode).toBe('none');
    expect(inspected.Config.User).toBe('0:0');
    expect(inspected.HostConfig.CapAdd).toEqual(['KILL', 'SETUID', 'SETGID', 'SETPCAP']);
    // The workspace the run wrote is the run's own directory on the host.
    expect((await sh(first.sandbox, 'cat /workspace/left.txt')).out).toBe('one\n');
    await first.sandbox.close();
    // It wrote under HOME, in its root layer: removed in the background, never reused.
    await removed(inspected.Id, "the first run's container to be removed");

    await filled(backend, 1);
    const second = await open(backend);
    const seen = await sh(
      second.sandbox,
      'ls /workspace; cat /tmp/left.txt "$HOME/left.txt" 2>/dev/null; hostname',
    );
    expect(seen.out).not.toContain('one');
    expect(seen.out).not.toContain('left.txt');
    expect(seen.out.trim()).not.toBe(written.out.trim());
    expect(handouts).toEqual(['hit', 'hit']);
  }, 180_000);

  it('sets no limits at hand-out when the run keeps the ones the container was made with', async () => {
    const update = jest.spyOn(Dockerode.Container.prototype, 'update');
    try {
      const { backend } = poolBackend(2, 2);
      backend.warm();
      await filled(backend, 2);
      // dockerSandboxSettings: 256 MiB, 128 pids, 1 CPU, as `open` asks by default.
      const same = await open(backend);
      expect((await sh(same.sandbox, 'echo ok')).out).toBe('ok\n');
      expect(update).not.toHaveBeenCalled();
      const other = await open(backend, { pids: 32 });
      expect((await sh(other.sandbox, 'echo ok')).out).toBe('ok\n');
      expect(update).toHaveBeenCalledTimes(1);
      const inspected = await docker.getContainer(`ambient-${other.runId}-1`).inspect();
      expect(inspected.HostConfig.PidsLimit).toBe(32 + 3);
    } finally {
      update.mockRestore();
    }
  }, 180_000);

  it('bridges the API into a pooled container over the forwarder it was started with', async () => {
    const { backend, handouts } = poolBackend(1, 1);
    backend.warm();
    await filled(backend, 1);
    const api = createServer((_request, response) => response.end('pong from the API'));
    await new Promise<void>((resolveListen) => api.listen(0, '127.0.0.1', resolveListen));
    try {
      const apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}/api/v1`;
      const { sandbox } = await open(backend, {}, apiUrl);
      expect(sandbox.apiUrl).toBe('http://127.0.0.1:7171/api/v1');
      const request =
        'exec 3<>/dev/tcp/127.0.0.1/7171; printf "GET /api/v1/ping HTTP/1.0\\r\\n\\r\\n" >&3; cat <&3';
      const result = await sh(sandbox, `bash -c '${request}'`);
      expect(result.code).toBe(0);
      expect(result.out).toContain('pong from the API');
      expect(handouts).toEqual(['hit']);
    } finally {
      await new Promise((resolveClose) => api.close(resolveClose));
    }
  }, 180_000);

  it('refills after a burst, grown to the burst, without a run waiting for a container', async () => {
    // Its most leaves room for the burst's 5 and the 2 its hits hold: the pool makes none that
    // their return would find it too full for.
    const { backend, handouts, metrics } = poolBackend(2, 7);
    backend.warm();
    await filled(backend, 2);

    const burst = await Promise.all(Array.from({ length: 5 }, () => open(backend)));
    const results = await Promise.all(burst.map(({ sandbox }) => sh(sandbox, 'echo ok')));
    expect(results.map((r) => r.out)).toEqual(Array(5).fill('ok\n'));
    expect(handouts.filter((h) => h === 'hit')).toHaveLength(2);
    expect(handouts.filter((h) => h === 'miss')).toHaveLength(3);
    const scraped = await metrics.scrape();
    expect(scraped).toContain('ambient_sandbox_pool_handouts_total{result="hit"} 2');
    expect(scraped).toContain('ambient_sandbox_pool_handouts_total{result="miss"} 3');
    expect(scraped).toContain('ambient_sandbox_handout_seconds_count{result="miss"} 3');

    // The burst of 5 is the pool's new target (under its max of 7).
    await filled(backend, 5);
    expect(backend.pool!.readyCount(AGENT_IMAGE)).toBe(5);
    handouts.length = 0;
    const again = await Promise.all(Array.from({ length: 5 }, () => open(backend)));
    await Promise.all(again.map(({ sandbox }) => sh(sandbox, 'true')));
    expect(handouts).toEqual(Array(5).fill('hit'));
  }, 300_000);

  it("keeps a snapshot image's container warm once a run asked for that image", async () => {
    // Stands for an environment's snapshot image (docker-snapshot-image.ts): any local image.
    const snapshot = `ambient-pool-test-snapshot:${process.pid}`;
    await docker.getImage(AGENT_IMAGE).tag({
      repo: snapshot.split(':')[0],
      tag: snapshot.split(':')[1],
    });
    try {
      const { backend, handouts } = poolBackend(1, 2);
      backend.warm();
      await filled(backend, 1);
      const first = await open(backend, {}, null, snapshot);
      expect((await sh(first.sandbox, 'echo cold')).out).toBe('cold\n');
      await filled(backend, 1, snapshot);
      const second = await open(backend, {}, null, snapshot);
      expect((await sh(second.sandbox, 'echo warm')).out).toBe('warm\n');
      expect(handouts).toEqual(['miss', 'hit']);
      const inspected = await docker.getContainer(`ambient-${second.runId}-1`).inspect();
      expect(inspected.Config.Image).toBe(snapshot);
      // The default image's pool served neither.
      expect(backend.pool!.readyCount(AGENT_IMAGE)).toBe(1);
    } finally {
      await Promise.all(opened.splice(0).map((sandbox) => sandbox.close()));
      await Promise.all(backends.splice(0).map((backend) => backend.drain()));
      await docker
        .getImage(snapshot)
        .remove()
        .catch(() => undefined);
    }
  });

  it('removes its idle containers when drained', async () => {
    const { backend, deployment } = poolBackend(2, 2);
    backend.warm();
    await filled(backend, 2);
    expect(await containersLabelled({ [SANDBOX_LABELS.deployment]: deployment })).toHaveLength(2);
    await backend.drain();
    expect(await containersLabelled({ [SANDBOX_LABELS.deployment]: deployment })).toEqual([]);
  }, 180_000);

  it('stops waiting for a daemon that does not answer a removal, and removes the rest meanwhile', async () => {
    const { backend, deployment } = poolBackend(2, 2, 2_000);
    backend.warm();
    await filled(backend, 2);
    const [stuck, other] = await containersLabelled({ [SANDBOX_LABELS.deployment]: deployment });
    // The daemon never answers the removal of one of them (a hung request on a loaded host).
    const original = Dockerode.Container.prototype.remove;
    let otherRemoval: Promise<unknown> | null = null;
    const remove = jest.spyOn(Dockerode.Container.prototype, 'remove').mockImplementation(function (
      this: Dockerode.Container,
      ...args: unknown[]
    ) {
      if (this.id === stuck.Id) return new Promise(() => undefined);
      const removal = (original as (...a: unknown[]) => Promise<unknown>).apply(this, args);
      if (this.id === other.Id) otherRemoval = removal;
      return removal;
    });
    try {
      expect(await backend.drain()).toBe(false);
      // The other one's removal went out during the drain, not behind the hung one (how long the
      // daemon takes to finish it on a loaded host is the daemon's: it is awaited, not timed).
      expect(otherRemoval).not.toBeNull();
      await settledWithin(otherRemoval!, "the other container's removal", 60_000);
      // The other one is gone; the one the daemon did not answer for keeps its labels for the sweep.
      const left = await containersLabelled({ [SANDBOX_LABELS.deployment]: deployment });
      expect(left.map((c) => c.Id)).toEqual([stuck.Id]);
      expect(left.map((c) => c.Id)).not.toContain(other.Id);
    } finally {
      remove.mockRestore();
      await docker
        .getContainer(stuck.Id)
        .remove({ force: true })
        .catch(() => undefined);
    }
  }, 180_000);

  describe("a closed sandbox's container", () => {
    /** What a run leaves outside its workspace and root layer, and a process that would outlive it. */
    const LEAVE_BEHIND = [
      'echo secret > /tmp/left.txt',
      'mkdir -p /tmp/locked/inner && echo secret > /tmp/locked/inner/f && chmod 000 /tmp/locked/inner /tmp/locked',
      'ln -s /workspace/left.txt /tmp/link',
      'echo secret > /dev/shm/left',
      'ipcmk -M 4096 >/dev/null',
      'setsid sleep 600 </dev/null >/dev/null 2>&1 &',
      'echo secret > /workspace/left.txt',
      'echo ok',
    ].join('\n');
    const LOOK = [
      'ls -A /workspace /tmp /dev/shm /dev/mqueue',
      'ipcs -m | grep -c 0x || true',
      'for p in /proc/[0-9]*; do cat $p/cmdline 2>/dev/null | tr "\\0" " "; echo; done | grep -c "sleep [6]00" || true',
    ].join('; ');

    it('goes back to the pool emptied, and the next run there finds nothing of the first', async () => {
      // Room for two: the one made in its place while the first run ran, and the one given back.
      const under = poolBackend(1, 2);
      const { backend, handouts, metrics } = under;
      backend.warm();
      await filled(backend, 1);

      // Each run reaches the API through the container's forwarder, kept across the return.
      const api = createServer((request, response) => response.end(`pong for ${request.url}`));
      await new Promise<void>((resolveListen) => api.listen(0, '127.0.0.1', resolveListen));
      const apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}/api/v1`;
      const ping = (path: string) =>
        `bash -c 'exec 3<>/dev/tcp/127.0.0.1/7171; printf "GET /api/v1/${path} HTTP/1.0\\r\\n\\r\\n" >&3; cat <&3'`;
      closeAfterTest.push(() => new Promise((resolveClose) => api.close(resolveClose)));

      const first = await open(backend, { pids: 64 }, apiUrl);
      expect((await sh(first.sandbox, ping('first'))).out).toContain('pong for /api/v1/first');
      expect((await sh(first.sandbox, LEAVE_BEHIND)).out).toBe('ok\n');
      // Metadata on the directory at /workspace itself (the container's, not the run's): an extended
      // attribute (setxattr(2) by its number: the image has perl, not setfattr) and a mode.
      const marked = await sh(
        first.sandbox,
        `perl -e 'my ($p, $n, $v) = ("/workspace", "user.leak", "secret"); print "xattr=", syscall(${XATTR_SYSCALLS.setxattr}, $p, $n, $v, 6, 0), "\\n"' && chmod 700 /workspace`,
      );
      expect(marked.out).toBe('xattr=0\n');
      const { Id } = await docker.getContainer(`ambient-${first.runId}-1`).inspect();
      await first.sandbox.close();
      // The close left the run's workspace at its own path, with what the run wrote.
      expect((await readFile(join(first.workspace, 'left.txt'), 'utf8')).trim()).toBe('secret');
      expect(await returned(under, 1)).toEqual(['reused']);
      await filled(backend, 2);

      const second = await open(backend, {}, apiUrl);
      expect((await sh(second.sandbox, ping('second'))).out).toContain('pong for /api/v1/second');
      // The same container, under the second execution's name, with the second's limits.
      const inspected = await docker.getContainer(`ambient-${second.runId}-1`).inspect();
      expect(inspected.Id).toBe(Id);
      expect(inspected.HostConfig.PidsLimit).toBe(128 + 3);
      const seen = await sh(second.sandbox, LOOK);
      // listxattr(2): no attribute left; the mode Ambient gives it.
      const metadata = await sh(
        second.sandbox,
        `perl -e 'my ($p, $b) = ("/workspace", "\\0" x 256); print "xattrs=", syscall(${XATTR_SYSCALLS.listxattr}, $p, $b, 256), "\\n"'; stat -c %a /workspace`,
      );
      expect(metadata.out).toBe('xattrs=0\n755\n');
      // Four empty listings, no shared memory segment, no process of the first run.
      expect(seen.out).not.toContain('left');
      expect(seen.out).not.toContain('locked');
      expect(seen.out.trim().split('\n').slice(-2)).toEqual(['0', '0']);
      expect(handouts).toEqual(['hit', 'hit']);
      // What the second run writes is its own workspace's, not the first's.
      await sh(second.sandbox, 'echo two > /workspace/mine.txt');
      expect((await readFile(join(second.workspace, 'mine.txt'), 'utf8')).trim()).toBe('two');
      expect(await readdir(first.workspace)).toEqual(['left.txt']);
      expect(await metrics.scrape()).toContain(
        'ambient_sandbox_pool_returns_total{outcome="reused"} 1',
      );
    }, 180_000);

    it('is removed when its run changed the root layer or hit a limit', async () => {
      const under = poolBackend(1, 1);
      const { backend } = under;
      backend.warm();
      await filled(backend, 1);

      const home = await open(backend);
      expect((await sh(home.sandbox, 'echo x > "$HOME/.state" && echo ok')).out).toBe('ok\n');
      const homeId = (await docker.getContainer(`ambient-${home.runId}-1`).inspect()).Id;
      await home.sandbox.close();
      expect(await returned(under, 1)).toEqual(['root_changed']);
      await removed(homeId, 'the container whose run wrote under HOME to be removed');

      await filled(backend, 1);
      const forks = await open(backend, { pids: 16 });
      await sh(forks.sandbox, 'for i in $(seq 40); do sleep 30 & done 2>/dev/null; true');
      const forksId = (await docker.getContainer(`ambient-${forks.runId}-1`).inspect()).Id;
      await forks.sandbox.close();
      expect(await returned(under, 2)).toEqual(['root_changed', 'limit_hit']);
      await removed(forksId, 'the container whose run hit its process limit to be removed');
    }, 180_000);

    it('is removed with AMBIENT_DOCKER_POOL_REUSE off', async () => {
      const under = poolBackend(1, 1, undefined, false);
      const { backend } = under;
      backend.warm();
      await filled(backend, 1);
      const run = await open(backend);
      expect((await sh(run.sandbox, 'echo ok')).out).toBe('ok\n');
      const { Id } = await docker.getContainer(`ambient-${run.runId}-1`).inspect();
      await run.sandbox.close();
      await removed(Id, 'the container to be removed');
      expect(under.returns).toEqual([]);
    }, 180_000);
  });

  describe("a dead worker's pool", () => {
    let model: FakeModelServer;
    let env: TestEnvironment;

    beforeAll(async () => {
      model = await startFakeModelServer();
      env = createTestEnvironment('pool-sweep', model.url);
    });

    afterAll(async () => {
      await env?.destroy();
      await model?.close();
    });

    it('is removed by the sweep of a live process, which keeps its own pool', async () => {
      const worker = spawnAmbient(
        env.childEnv({
          AMBIENT_ROLES: 'worker',
          AMBIENT_SANDBOX: 'docker',
          AMBIENT_SANDBOX_READONLY_PATHS: '',
          AMBIENT_DOCKER_IMAGE: AGENT_IMAGE,
          AMBIENT_DOCKER_POOL_SIZE: '2',
        }),
      );
      let deadPool: Dockerode.ContainerInfo[] = [];
      try {
        await worker.ready;
        const owned = (info: Dockerode.ContainerInfo): boolean =>
          (info.Labels[SANDBOX_LABELS.poolOwner] ?? '').split('/')[2] === String(worker.child.pid);
        deadPool = await waitFor(
          async () =>
            (await containersLabelled({ [SANDBOX_LABELS.managed]: '1' })).filter(
              (info) => owned(info) && info.State === 'running',
            ),
          (found) => found.length === 2,
          { ...CONTAINER_TIMEOUT, what: "the worker's pool to fill" },
        );
      } finally {
        worker.child.kill('SIGKILL');
        await waitForExit(worker.child);
      }
      const deployment = deadPool[0].Labels[SANDBOX_LABELS.deployment];

      // A live process of the same deployment, with a pool of its own.
      const live = new DockerSandboxBackend(
        dockerSandboxSettings({ poolSize: 1, poolMax: 1 }),
        docker,
        deployment,
        {
          workspaceRoot: root,
        },
      );
      backends.push(live);
      live.warm();
      await filled(live, 1);

      expect(await live.sweep(() => Promise.resolve(true))).toBe(2);
      for (const info of deadPool) {
        await expect(docker.getContainer(info.Id).inspect()).rejects.toMatchObject({
          statusCode: 404,
        });
      }
      const left = await containersLabelled({ [SANDBOX_LABELS.deployment]: deployment });
      expect(left).toHaveLength(1);
      expect(left[0].State).toBe('running');
      expect(live.pool!.readyCount(AGENT_IMAGE)).toBe(1);
    }, 240_000);
  });
});
