import type Dockerode from 'dockerode';
import type { AppConfig } from '../../../../../config/app-config';
import { DockerHost } from './docker-host';

describe('DockerHost.cgroupParent', () => {
  beforeEach(() => {
    jest.useFakeTimers();
    // Root, with a local daemon: the containers' cgroup parent is asked of the daemon.
    jest.spyOn(process, 'getuid').mockReturnValue(0);
  });
  afterEach(() => {
    jest.useRealTimers();
    jest.restoreAllMocks();
  });

  /** A host whose daemon answers `info` as `answer` says, given 1 s to. */
  function hostAnswering(answer: () => Promise<unknown>) {
    const info = jest.fn(answer);
    const docker = { info, modem: { socketPath: '/var/run/docker.sock' } } as unknown as Dockerode;
    const settings = { docker: { user: 'ambient' } } as unknown as AppConfig['sandbox'];
    return { host: new DockerHost(docker, settings, 'deployment', 1_000), info };
  }

  /** Asks once, and sees the answer given up on when its second passed. */
  async function firstGivenUp(host: DockerHost): Promise<void> {
    const first = host.cgroupParent();
    await jest.advanceTimersByTimeAsync(1_000);
    await expect(first).resolves.toBeNull();
  }

  it('does not keep a daemon that never says its cgroup driver as the answer for every later start', async () => {
    const { host } = hostAnswering(() => new Promise(() => undefined));
    await firstGivenUp(host);
    const second = host.cgroupParent();
    await jest.advanceTimersByTimeAsync(1_000);
    await expect(second).resolves.toBeNull();
  });

  it('asks a daemon that has not answered yet no second time', async () => {
    let answer!: (info: object) => void;
    const { host, info } = hostAnswering(() => new Promise((resolve) => (answer = resolve)));
    await firstGivenUp(host);
    const second = host.cgroupParent();
    expect(info).toHaveBeenCalledTimes(1);
    answer({ CgroupDriver: 'systemd' });
    await expect(second).resolves.toBeNull();
    expect(info).toHaveBeenCalledTimes(1);
  });
});
