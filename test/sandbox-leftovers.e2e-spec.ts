/**
 * Nothing is left behind by workers that stop, whatever the stop: a docker worker with a warm pool
 * stopped by SIGTERM while a run executes removes its containers itself; the run cgroups of a
 * bubblewrap worker killed by SIGKILL while runs execute are removed by the next worker's sweep;
 * that worker, stopped by SIGTERM with the runs in flight, removes its own.
 */
import Dockerode from 'dockerode';
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { startTimeOf } from '../src/modules/workers/sandbox/backends/docker/pool-owner';
import { dockerAnswers } from '../src/modules/workers/sandbox/backends/docker/docker-sandbox';
import { removeGroup } from '../src/modules/workers/sandbox/cgroup-limits';
import { SANDBOX_LABELS } from '../src/modules/workers/sandbox/sandbox.types';
import { FakeModelServer, startFakeModelServer } from './fixtures/fake-model-server';
import { apiClient } from './support/api-client';
import {
  createTestEnvironment,
  startTestApp,
  LOADED_TAKEOVER_LEASE_MS,
  TestApp,
  TestEnvironment,
} from './support/test-app';
import { waitFor } from './support/wait';
import { spawnAmbient, waitForExit } from './support/worker-process';

const IMAGE = 'ambient-agent:bookworm';
const BUILD_IMAGE = resolve(__dirname, '..', 'sandbox', 'agent-image', 'build-image.sh');
const SLOW = { timeoutMs: 90_000, intervalMs: 100 };
const V2 = existsSync('/sys/fs/cgroup/cgroup.controllers');
/** Where the sandboxes' groups are listed (v1: the memory hierarchy; pids and cpu mirror it). */
const SANDBOX_GROUPS = V2 ? '/sys/fs/cgroup/ambient' : '/sys/fs/cgroup/memory/ambient';

const docker = new Dockerode();

/** The sandbox cgroups a process made (named `<run>-<execution>.<pid>.<start time>`). */
function cgroupsOf(pid: number, startTime: string): string[] {
  const suffix = `.${pid}.${startTime}`;
  if (!existsSync(SANDBOX_GROUPS)) return [];
  return readdirSync(SANDBOX_GROUPS).filter((name) => name.endsWith(suffix));
}

/** How many processes a group holds (0 once it is gone). */
function processesIn(group: string): number {
  try {
    const procs = readFileSync(join(SANDBOX_GROUPS, group, 'cgroup.procs'), 'utf8');
    return procs.split('\n').filter(Boolean).length;
  } catch {
    return 0;
  }
}

function containersOf(deployment: string): Promise<Dockerode.ContainerInfo[]> {
  return docker.listContainers({
    all: true,
    filters: { label: [`${SANDBOX_LABELS.deployment}=${deployment}`] },
  });
}

describe('sandbox leftovers after SIGTERM and SIGKILL (docker pool, bubblewrap cgroups)', () => {
  let model: FakeModelServer;
  let env: TestEnvironment;
  let app: TestApp;
  let api: ReturnType<typeof apiClient>;
  const workers: ReturnType<typeof spawnAmbient>[] = [];
  const owners: { pid: number; startTime: string }[] = [];
  let deployment: string | undefined;

  beforeAll(async () => {
    if (!(await dockerAnswers(docker, 3000))) {
      throw new Error('no docker daemon answers: this test needs one (.ci/run starts dockerd)');
    }
    await promisify(execFile)(BUILD_IMAGE, ['--tag', IMAGE], { maxBuffer: 16 << 20 });
    model = await startFakeModelServer();
    // Every execution sleeps: a run taken over carries its earlier executions' tool calls in its
    // conversation (each one a step of the script), as many as the executions that got that far.
    const sleep = { toolCalls: [{ name: 'run_command', arguments: { command: 'sleep 300' } }] };
    model.script('sleepy', [...Array.from({ length: 8 }, () => sleep), { text: 'woke up' }]);
    env = createTestEnvironment('leftovers', model.url, { leaseMs: LOADED_TAKEOVER_LEASE_MS });
    // The API only: every run executes in one of the child workers below.
    app = await startTestApp(env, ['api']);
    api = apiClient(app.baseUrl, app.apiKey);
  }, 600_000);

  afterAll(async () => {
    for (const worker of workers.splice(0)) {
      worker.child.kill('SIGKILL');
      await waitForExit(worker.child);
    }
    await app?.close();
    // Whatever a failed run of this spec left: its deployment's containers, or, when it failed
    // before it learnt the deployment, those its workers made.
    const ours = (info: Dockerode.ContainerInfo) =>
      owners.some(({ pid, startTime }) =>
        info.Labels[SANDBOX_LABELS.poolOwner]?.endsWith(`/${pid}/${startTime}`),
      );
    const left = deployment
      ? await containersOf(deployment)
      : (
          await docker.listContainers({ all: true, filters: { label: [SANDBOX_LABELS.poolOwner] } })
        ).filter(ours);
    for (const info of left) await docker.getContainer(info.Id).remove({ force: true, v: true });
    for (const owner of owners) {
      for (const group of cgroupsOf(owner.pid, owner.startTime)) {
        const dirs = V2
          ? [join(SANDBOX_GROUPS, group)]
          : ['memory', 'pids', 'cpu'].map((c) => join('/sys/fs/cgroup', c, 'ambient', group));
        await removeGroup(dirs);
      }
    }
    await env?.destroy();
    await model?.close();
  });

  /** A worker process of the given backend; its pid and start time name its cgroups. */
  async function startWorker(extra: Record<string, string>) {
    const worker = spawnAmbient(
      env.childEnv({
        AMBIENT_ROLES: 'worker',
        AMBIENT_ORPHAN_SWEEP_INTERVAL_MS: '200',
        ...extra,
      }),
    );
    workers.push(worker);
    await worker.ready;
    const owner = { pid: worker.child.pid!, startTime: startTimeOf(worker.child.pid!)! };
    owners.push(owner);
    return { worker, owner };
  }

  async function stop(worker: ReturnType<typeof spawnAmbient>, signal: NodeJS.Signals) {
    worker.child.kill(signal);
    await waitForExit(worker.child);
    workers.splice(workers.indexOf(worker), 1);
  }

  /** A worker's run cgroups, with the runs' states (a timeout's message says where each stands). */
  async function groupsAndRuns(owner: { pid: number; startTime: string }, runIds: string[]) {
    const runs = await Promise.all(
      runIds.map(async (id) => {
        const { state, status_message } = (await api.get(`/agent/runs/${id}`)).body as {
          state: string;
          status_message?: unknown;
        };
        return { id, state, status_message };
      }),
    );
    return { groups: cgroupsOf(owner.pid, owner.startTime), runs };
  }

  const sleepingRun = async (name: string) =>
    (await api.post('/agent/runs', { prompt: `${name} [script:sleepy]` })).body.run_id as string;

  it('leaves no container and no run cgroup of SIGTERMed docker and bubblewrap workers or a SIGKILLed bubblewrap one', async () => {
    // 1. Docker with a warm pool, a run in flight, then SIGTERM.
    const dockerWorker = await startWorker({
      AMBIENT_SANDBOX: 'docker',
      AMBIENT_SANDBOX_READONLY_PATHS: '',
      AMBIENT_DOCKER_IMAGE: IMAGE,
      AMBIENT_DOCKER_POOL_SIZE: '2',
    });
    const dockerRun = await sleepingRun('Docker');
    // Found by name: a container the pool made carries no run label (labels cannot change at
    // hand-out), and whether the run finds one ready depends on how fast the pool filled.
    const running = await waitFor(
      async () => {
        const all = await docker.listContainers({ filters: { name: [`ambient-${dockerRun}-`] } });
        return all[0] ?? null;
      },
      (info) => info !== null && info.State === 'running',
      { ...SLOW, what: "the docker run's container to run" },
    );
    deployment = running!.Labels[SANDBOX_LABELS.deployment];
    // The pool refills beside the run: containers made ahead of demand, owned by the worker.
    await waitFor(
      () => containersOf(deployment!),
      (all) => all.some((c) => c.Id !== running!.Id && c.Labels[SANDBOX_LABELS.poolOwner]),
      { ...SLOW, what: 'a pooled container beside the run' },
    );
    await stop(dockerWorker.worker, 'SIGTERM');
    expect(await containersOf(deployment)).toEqual([]);

    // 2. Bubblewrap with cgroup limits, runs in flight (the docker worker's, taken over, and a
    //    new one), then SIGKILL.
    const bubblewrapWorker = await startWorker({ AMBIENT_SANDBOX: 'bubblewrap' });
    const bubblewrapRun = await sleepingRun('Bubblewrap');
    const { groups: killedGroups } = await waitFor(
      () => groupsAndRuns(bubblewrapWorker.owner, [dockerRun, bubblewrapRun]),
      ({ groups }) => groups.length >= 2 && groups.every((g) => processesIn(g) > 0),
      { ...SLOW, what: "both runs' commands to run in the bubblewrap worker's cgroups" },
    );
    expect(killedGroups.some((g) => g.startsWith(bubblewrapRun))).toBe(true);
    await stop(bubblewrapWorker.worker, 'SIGKILL');
    // Killed before it could close anything: its groups (and their sleeping commands) remain.
    expect(cgroupsOf(bubblewrapWorker.owner.pid, bubblewrapWorker.owner.startTime)).toEqual(
      killedGroups,
    );

    // 3. A fresh worker's sweep removes them, killing what ran in them.
    const fresh = await startWorker({ AMBIENT_SANDBOX: 'bubblewrap' });
    await waitFor(
      async () => cgroupsOf(bubblewrapWorker.owner.pid, bubblewrapWorker.owner.startTime),
      (groups) => groups.length === 0,
      { ...SLOW, what: "the killed worker's cgroups to be swept" },
    );
    expect(await containersOf(deployment)).toEqual([]);

    // 4. The fresh worker takes both runs over; stopped by SIGTERM with them in flight, it hands
    //    them back and removes their groups before it exits.
    await waitFor(
      () => groupsAndRuns(fresh.owner, [dockerRun, bubblewrapRun]),
      ({ groups }) => groups.length >= 2 && groups.every((g) => processesIn(g) > 0),
      { ...SLOW, what: "both runs' commands to run in the fresh worker's cgroups" },
    );
    await stop(fresh.worker, 'SIGTERM');
    expect(cgroupsOf(fresh.owner.pid, fresh.owner.startTime)).toEqual([]);
    expect(await containersOf(deployment)).toEqual([]);
    for (const run of [dockerRun, bubblewrapRun]) await api.post(`/agent/runs/${run}/cancel`);
  }, 300_000);
});
