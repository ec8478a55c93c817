/**
 * The sandbox orphan sweep against the real daemon: the container of a worker killed by SIGKILL
 * is removed by a surviving worker once the run's lease has lapsed, while the container of a run
 * that worker still executes stays.
 */
import Dockerode from 'dockerode';
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { dockerAnswers } from '../src/modules/workers/sandbox/backends/docker/docker-sandbox';
import { SANDBOX_LABELS } from '../src/modules/workers/sandbox/sandbox.types';
import { FakeModelServer, startFakeModelServer } from './fixtures/fake-model-server';
import { apiClient } from './support/api-client';
import {
  createTestEnvironment,
  startTestApp,
  TestApp,
  TestEnvironment,
  TAKEOVER_LEASE_MS,
} from './support/test-app';
import { waitFor } from './support/wait';
import { spawnAmbient, waitForExit } from './support/worker-process';

const IMAGE = 'ambient-agent:bookworm';
const BUILD_IMAGE = resolve(__dirname, '..', 'sandbox', 'agent-image', 'build-image.sh');
const CONTAINER_TIMEOUT = { timeoutMs: 60_000, intervalMs: 100 };

const docker = new Dockerode();

/** The containers (any state) carrying all these labels. */
function containersLabelled(labels: Record<string, string>): Promise<Dockerode.ContainerInfo[]> {
  return docker.listContainers({
    all: true,
    filters: { label: Object.entries(labels).map(([name, value]) => `${name}=${value}`) },
  });
}

/** Resolves once a container of the run runs `sleep 300` (the scripted command); its info. */
async function sleepingContainerOf(runId: string): Promise<Dockerode.ContainerInfo> {
  const sleeping = await waitFor(
    async () => {
      const [info] = await containersLabelled({ [SANDBOX_LABELS.run]: runId });
      if (info?.State !== 'running') return null;
      const top = (await docker
        .getContainer(info.Id)
        .top({ ps_args: '-o pid,args' })
        .catch(() => null)) as { Processes?: string[][] } | null;
      return top?.Processes?.some(([, args]) => args === 'sleep 300') ? info : null;
    },
    Boolean,
    { ...CONTAINER_TIMEOUT, what: `run ${runId}'s command to run in its container` },
  );
  return sleeping!;
}

describe('sandbox orphan sweep (docker)', () => {
  let model: FakeModelServer;
  let env: TestEnvironment;
  let app: TestApp;
  let api: ReturnType<typeof apiClient>;
  let deployment: string | undefined;
  const workers: ReturnType<typeof spawnAmbient>[] = [];

  beforeAll(async () => {
    if (!(await dockerAnswers(docker, 3000))) {
      throw new Error('no docker daemon answers: this test needs one (.ci/run starts dockerd)');
    }
    // Cached by tag: a no-op once the image exists.
    await promisify(execFile)(BUILD_IMAGE, ['--tag', IMAGE], { maxBuffer: 16 << 20 });
    model = await startFakeModelServer();
    model.script('sleepy', [
      { toolCalls: [{ name: 'run_command', arguments: { command: 'sleep 300' } }] },
      { text: 'woke up' },
    ]);
    env = createTestEnvironment('sweep', model.url, { leaseMs: TAKEOVER_LEASE_MS });
    // The surviving worker: one run at a time, so the child worker takes the second run.
    app = await startTestApp(env, ['api', 'worker'], {
      'sandbox.backend': 'docker',
      'sandbox.readonlyPaths': '',
      'sandbox.docker.defaultImage': IMAGE,
      'environments.orphanSweepIntervalMs': 200,
      'runs.workerConcurrency': 1,
      // Only the child worker's runs need the short lease (it is killed); the live run must not
      // lapse here while three sweeps pass on a loaded machine (it would get a new container).
      'runs.leaseMs': 10_000,
      // Containers made for a run (found by its label); pooled ones: sandbox-docker-pool.
      'sandbox.docker.poolSize': 0,
    });
    api = apiClient(app.baseUrl, app.apiKey);
  }, 600_000);

  afterAll(async () => {
    for (const worker of workers.splice(0)) {
      worker.child.kill('SIGKILL');
      await waitForExit(worker.child);
    }
    await app?.close();
    // Whatever this test's deployment left (nothing, when it passed).
    if (deployment) {
      const left = await containersLabelled({ [SANDBOX_LABELS.deployment]: deployment });
      await Promise.all(
        left.map((info) => docker.getContainer(info.Id).remove({ force: true, v: true })),
      );
    }
    await env?.destroy();
    await model?.close();
  });

  it("removes a SIGKILLed worker's container once its lease lapsed, not a live run's", async () => {
    // A run the surviving (in-process) worker executes, sleeping for the whole test.
    const liveRun = (await api.post('/agent/runs', { prompt: 'Stay [script:sleepy]' })).body
      .run_id as string;
    const live = await sleepingContainerOf(liveRun);
    deployment = live.Labels[SANDBOX_LABELS.deployment];
    expect(deployment).toMatch(/^[0-9a-f]{16}$/);

    const worker = spawnAmbient(
      env.childEnv({
        AMBIENT_ROLES: 'worker',
        AMBIENT_SANDBOX: 'docker',
        AMBIENT_SANDBOX_READONLY_PATHS: '',
        AMBIENT_DOCKER_IMAGE: IMAGE,
        AMBIENT_DOCKER_POOL_SIZE: '0',
      }),
    );
    workers.push(worker);
    await worker.ready;
    const crashedRun = (await api.post('/agent/runs', { prompt: 'Crash [script:sleepy]' })).body
      .run_id as string;
    const crashed = await sleepingContainerOf(crashedRun);
    // Both processes of one deployment label their containers alike.
    expect(crashed.Labels[SANDBOX_LABELS.deployment]).toBe(deployment);
    // Its first execution, or a later one of the same worker: on a loaded machine the short
    // takeover lease can lapse once before the kill, and only the child is free to take it again.
    const oldExecution = crashed.Labels[SANDBOX_LABELS.execution];
    expect(oldExecution).toMatch(/^[1-9]\d*$/);

    worker.child.kill('SIGKILL');
    await waitForExit(worker.child);

    await waitFor(
      () =>
        containersLabelled({
          [SANDBOX_LABELS.run]: crashedRun,
          [SANDBOX_LABELS.execution]: oldExecution,
        }),
      (left) => left.length === 0,
      { ...CONTAINER_TIMEOUT, what: "the killed worker's container to be swept" },
    );

    // Several more sweeps: each removes a canary container (not live: no such run) made after
    // the previous one was gone, and each saw the live run's container too.
    for (let sweep = 1; sweep <= 3; sweep++) {
      const canary = await docker.createContainer({
        Image: IMAGE,
        Cmd: ['true'],
        Labels: {
          [SANDBOX_LABELS.managed]: '1',
          [SANDBOX_LABELS.deployment]: deployment!,
          [SANDBOX_LABELS.run]: `canary-${process.pid}-${sweep}`,
          [SANDBOX_LABELS.execution]: '1',
          [SANDBOX_LABELS.team]: 'canary',
        },
        HostConfig: { NetworkMode: 'none' },
      });
      await waitFor(
        () =>
          canary.inspect().then(
            () => true,
            () => false,
          ),
        (exists) => !exists,
        { ...CONTAINER_TIMEOUT, what: `sweep ${sweep} to remove its canary` },
      );
    }
    const [stillLive] = await containersLabelled({ [SANDBOX_LABELS.run]: liveRun });
    expect(stillLive).toMatchObject({ Id: live.Id, State: 'running' });
    expect((await api.get(`/agent/runs/${liveRun}`)).body.state).toBe('INPROGRESS');

    // Cancelled, the runs' sandboxes are closed by the worker (the crashed run's retry may have
    // opened one once the live run no longer held the worker's one slot).
    await api.post(`/agent/runs/${crashedRun}/cancel`);
    await api.post(`/agent/runs/${liveRun}/cancel`);
    await waitFor(
      () => containersLabelled({ [SANDBOX_LABELS.deployment]: deployment! }),
      (left) => left.length === 0,
      { ...CONTAINER_TIMEOUT, what: "the cancelled runs' containers to be removed" },
    );
  }, 240_000);
});
