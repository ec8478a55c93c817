import type Dockerode from 'dockerode';
import type { AppConfig } from '../../../../../config/app-config';
import { DockerHost } from './docker-host';

describe('DockerHost.cgroupParent', () => {
  afterEach(() => {
    jest.useRealTimers();
    jest.restoreAllMocks();
  });

  it('does not keep a daemon that never says its cgroup driver as the answer for every later start', async () => {
    jest.useFakeTimers();
    jest.spyOn(process, 'getuid').mockReturnValue(0);
    const info = jest.fn(() => new Promise(() => undefined));
    const docker = { info, modem: { socketPath: '/var/run/docker.sock' } } as unknown as Dockerode;
    const settings = { docker: { user: 'ambient' } } as unknown as AppConfig['sandbox'];
    const host = new DockerHost(docker, settings, 'deployment', 1_000);

    const first = host.cgroupParent();
    await jest.advanceTimersByTimeAsync(1_000);
    await expect(first).resolves.toBeNull();
    const second = host.cgroupParent();
    await jest.advanceTimersByTimeAsync(1_000);
    await expect(second).resolves.toBeNull();
  });

  it('asks a daemon that has not answered yet no second time', async () => {
    jest.useFakeTimers();
    jest.spyOn(process, 'getuid').mockReturnValue(0);
    let answer!: (info: object) => void;
    const info = jest.fn(() => new Promise((resolve) => (answer = resolve)));
    const docker = { info, modem: { socketPath: '/var/run/docker.sock' } } as unknown as Dockerode;
    const settings = { docker: { user: 'ambient' } } as unknown as AppConfig['sandbox'];
    const host = new DockerHost(docker, settings, 'deployment', 1_000);

    const first = host.cgroupParent();
    await jest.advanceTimersByTimeAsync(1_000);
    await expect(first).resolves.toBeNull();
    const second = host.cgroupParent();
    expect(info).toHaveBeenCalledTimes(1);
    answer({ CgroupDriver: 'systemd' });
    await expect(second).resolves.toBeNull();
    expect(info).toHaveBeenCalledTimes(1);
  });
});
