import type Dockerode from 'dockerode';
import type { AppConfig } from '../../../../../config/app-config';
import { DockerHost } from './docker-host';

describe('DockerHost.cgroupParent', () => {
  afterEach(() => jest.useRealTimers());

  it('does not keep a daemon that never says its cgroup driver as the answer for every later start', async () => {
    jest.useFakeTimers();
    jest.spyOn(process, 'getuid').mockReturnValue(0);
    const info = jest
      .fn()
      .mockReturnValueOnce(new Promise(() => undefined))
      .mockResolvedValueOnce({ CgroupDriver: 'systemd' });
    const docker = { info, modem: { socketPath: '/var/run/docker.sock' } } as unknown as Dockerode;
    const settings = { docker: { user: 'ambient' } } as unknown as AppConfig['sandbox'];
    const host = new DockerHost(docker, settings, 'deployment', 1_000);

    const first = host.cgroupParent();
    await jest.advanceTimersByTimeAsync(1_000);
    await expect(first).resolves.toBeNull();
    await expect(host.cgroupParent()).resolves.toBeNull();
    expect(info).toHaveBeenCalledTimes(2);
    jest.restoreAllMocks();
  });
});
