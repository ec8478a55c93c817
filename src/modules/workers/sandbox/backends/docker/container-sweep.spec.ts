import { Logger } from '@nestjs/common';
import type Dockerode from 'dockerode';
import { SANDBOX_LABELS } from '../../sandbox.types';
import { sweepContainers } from './container-sweep';
import type { DockerHost } from './docker-host';

/** A leftover container of an execution that is no longer live. */
const leftover = (id: string, executionId: number) =>
  ({
    Id: id,
    Labels: {
      [SANDBOX_LABELS.managed]: '1',
      [SANDBOX_LABELS.deployment]: 'dep',
      [SANDBOX_LABELS.run]: 'run-1',
      [SANDBOX_LABELS.execution]: String(executionId),
    },
    Mounts: [],
  }) as unknown as Dockerode.ContainerInfo;

/** A host listing `containers`, whose removal of a container is `remove(id)`. */
function fakeHost(
  containers: Dockerode.ContainerInfo[],
  remove: (id: string) => Promise<void>,
): DockerHost {
  const docker = {
    listContainers: async () => containers,
    getContainer: (id: string) => ({ id }),
  } as unknown as Dockerode;
  return {
    docker,
    deployment: 'dep',
    removeContainer: (container: Dockerode.Container) => remove(container.id),
  } as unknown as DockerHost;
}

describe('sweepContainers', () => {
  afterEach(() => jest.restoreAllMocks());

  it('removes the containers after one the daemon fails to remove, and logs that one', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const removed: string[] = [];
    const host = fakeHost([leftover('c1', 1), leftover('c2', 2), leftover('c3', 3)], async (id) => {
      if (id === 'c1') {
        throw Object.assign(new Error('(HTTP code 500) server error'), {
          statusCode: 500,
          json: { message: 'unlinkat /var/lib/docker/x: device or resource busy' },
        });
      }
      removed.push(id);
    });

    expect(await sweepContainers(host, async () => false)).toBe(2);
    expect(removed).toEqual(['c2', 'c3']);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(String(warn.mock.calls[0]![0])).toContain('c1');
    expect(String(warn.mock.calls[0]![0])).toContain('device or resource busy');
  });
});
