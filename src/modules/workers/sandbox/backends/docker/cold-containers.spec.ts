import type Dockerode from 'dockerode';
import type { AppConfig } from '../../../../../config/app-config';
import type { SandboxSpec } from '../../sandbox.types';
import { ColdContainers } from './cold-containers';
import { COLD_STARTS } from './cold-start-slots';
import type { DockerHost } from './docker-host';
import { DockerSandbox, type StartedContainer } from './docker-sandbox-instance';

const IMAGE = 'ambient-agent:bookworm';
const WORKSPACE = '/tmp/ambient-cold/workspace';

const specOf = (executionId: number) =>
  ({
    runId: 'run-1',
    executionId,
    teamId: 'team-1',
    workspaceDir: WORKSPACE,
    image: null,
    network: 'none',
    limits: { memoryMb: 512, pids: 256, cpus: 1 },
  }) as unknown as SandboxSpec;

const dirsOf = (executionId: number) => ({
  privateDir: `/tmp/ambient-cold/.sandbox/${executionId}`,
  launchFifo: null,
});

/** A container the daemon made: `start` settles when `startDone` says (at once by default). */
function containerOf(
  id: string,
  startDone: Promise<void> = Promise.resolve(),
): Dockerode.Container {
  return {
    id,
    start: () => startDone,
    inspect: async () => ({ State: { Running: true, Pid: 0, ExitCode: 0 } }),
  } as unknown as Dockerode.Container;
}

/**
 * A daemon whose creates settle when the test says so (`creates`, in the order asked), and the
 * containers removed through the host (the removal of a leftover of an execution's name, asked
 * first by every start, is not among them).
 */
function fakeDaemon(leftoverRemoved: Promise<void> = Promise.resolve()) {
  const creates: { name: string; settle: (container: Dockerode.Container) => void }[] = [];
  const removed: string[] = [];
  const docker = {
    getContainer: (name: string) => ({ id: `leftover:${name}` }),
    createContainer: (options: { name: string }) =>
      new Promise<Dockerode.Container>((settle) => creates.push({ name: options.name, settle })),
  } as unknown as Dockerode;
  const host = {
    docker,
    settings: {},
    removeContainer: async (container: Dockerode.Container) => {
      if (container.id.startsWith('leftover:')) await leftoverRemoved;
      else removed.push(container.id);
    },
    shape: async (shape: { name: string; image: string }) => ({
      name: shape.name,
      Image: shape.image,
    }),
    reachesContainerPids: () => false,
  } as unknown as DockerHost;
  return { host, creates, removed };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

/** Whether `work` has settled once what is due now has run. */
const settledNow = (work: Promise<unknown>) =>
  Promise.race([
    work.then(
      () => true,
      () => true,
    ),
    new Promise<boolean>((resolve) => setImmediate(() => resolve(false))),
  ]);

describe('ColdContainers', () => {
  beforeEach(() => jest.useFakeTimers({ doNotFake: ['setImmediate'] }));
  afterEach(() => jest.useRealTimers());

  it('lets a sandbox closed while it waits for a slot end at once, without a container', async () => {
    const { host, creates } = fakeDaemon();
    const cold = new ColdContainers(host);
    const released: (StartedContainer | null)[] = [];
    const open = (executionId: number) =>
      new DockerSandbox(
        (closeRequested) =>
          cold.start(
            specOf(executionId),
            IMAGE,
            WORKSPACE,
            dirsOf(executionId),
            null,
            closeRequested,
          ),
        async (started) => {
          released.push(started);
        },
        { docker: { user: '1000:1000' } } as unknown as AppConfig['sandbox'],
        specOf(executionId),
        WORKSPACE,
        dirsOf(executionId).privateDir,
        null,
        null,
      );
    // Every slot held by a create the daemon never answers.
    for (let n = 1; n <= COLD_STARTS; n++) open(n);
    await tick();
    expect(creates).toHaveLength(COLD_STARTS);

    const queued = open(COLD_STARTS + 1);
    await tick();
    const closing = queued.close();
    expect(await settledNow(closing)).toBe(true);
    expect(await queued.started).toBe(false);
    expect(released).toEqual([null]);
    expect(creates).toHaveLength(COLD_STARTS);
    // A slot freed later does not go to the closed sandbox: no create is made for it.
    creates[0].settle(containerOf('c-1'));
    await tick();
    expect(creates).toHaveLength(COLD_STARTS);
  });

  it('frees the slot of a create the daemon does not answer in time and removes what it makes later', async () => {
    const { host, creates, removed } = fakeDaemon();
    const cold = new ColdContainers(host, 1000);
    const start = (executionId: number) =>
      cold.start(specOf(executionId), IMAGE, WORKSPACE, dirsOf(executionId), null, () => false);
    const hung = Array.from({ length: COLD_STARTS }, (_, n) =>
      start(n + 1).then(
        () => 'started',
        (error: Error) => error.message,
      ),
    );
    const next = start(COLD_STARTS + 1);
    await tick();
    expect(creates).toHaveLength(COLD_STARTS);

    jest.advanceTimersByTime(999);
    await tick();
    expect(creates).toHaveLength(COLD_STARTS);
    jest.advanceTimersByTime(1);
    await tick();
    for (const outcome of await Promise.all(hung)) {
      expect(outcome).toMatch(/could not be started: the docker daemon did not answer within 1 s/);
    }
    // The waiting start got a slot and made its container.
    expect(creates).toHaveLength(COLD_STARTS + 1);
    creates[COLD_STARTS].settle(containerOf('c-next'));
    await expect(next).resolves.toMatchObject({ container: { id: 'c-next' } });

    // A container the hung create makes after all is removed, not left behind.
    creates[0].settle(containerOf('c-late'));
    await tick();
    expect(removed).toEqual(['c-late']);
  });

  it('removes a container whose start the daemon does not answer in time', async () => {
    const { host, creates, removed } = fakeDaemon();
    const cold = new ColdContainers(host, 1000);
    const starting = cold.start(specOf(1), IMAGE, WORKSPACE, dirsOf(1), null, () => false);
    await tick();
    creates[0].settle(containerOf('c-1', new Promise(() => undefined)));
    await tick();
    jest.advanceTimersByTime(1000);
    await expect(starting).rejects.toThrow(/did not answer within 1 s/);
    expect(removed).toEqual(['c-1']);
  });

  it('makes no container once given up on, when the daemon answers its first call late', async () => {
    let answer!: () => void;
    const { host, creates } = fakeDaemon(new Promise((resolve) => (answer = resolve)));
    const cold = new ColdContainers(host, 1000);
    const starting = cold.start(specOf(1), IMAGE, WORKSPACE, dirsOf(1), null, () => false);
    await tick();
    jest.advanceTimersByTime(1000);
    await expect(starting).rejects.toThrow(/did not answer within 1 s/);
    // The leftover's removal ends now: the name may be another open's by then.
    answer();
    await tick();
    await tick();
    expect(creates).toHaveLength(0);
  });
});
