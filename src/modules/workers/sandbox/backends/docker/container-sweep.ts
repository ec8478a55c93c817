import { Logger } from '@nestjs/common';
import type Dockerode from 'dockerode';
import { rm } from 'node:fs/promises';
import { SANDBOX_LABELS, SANDBOX_PRIVATE_DIR, SANDBOX_WORKDIR } from '../../sandbox.types';
import { daemonDown, reason, unavailable } from './docker-errors';
import type { DockerHost } from './docker-host';
import { poolOwnerIsAlive } from './pool-owner';
import { isPoolWorkspaceSlot, removeDirs } from './sandbox-dirs';

const logger = new Logger('Sandbox');

/**
 * Removes the deployment's containers nobody uses any more, with their directories: pooled ones
 * whose owning process is gone (`ownerIsAlive`), and executions' ones whose execution is not live
 * (`isLive`). Returns how many it removed; one it could not remove is logged and left to the next
 * sweep.
 */
export async function sweepContainers(
  host: DockerHost,
  isLive: (runId: string, executionId: number) => Promise<boolean>,
  ownerIsAlive: (owner: string) => boolean = poolOwnerIsAlive,
): Promise<number> {
  const { docker, deployment } = host;
  let containers: Dockerode.ContainerInfo[];
  try {
    containers = await docker.listContainers({
      all: true,
      filters: {
        label: [`${SANDBOX_LABELS.managed}=1`, `${SANDBOX_LABELS.deployment}=${deployment}`],
      },
    });
  } catch (error) {
    if (daemonDown(error)) throw unavailable(error);
    throw error;
  }
  let removed = 0;
  for (const info of containers) {
    // Empty in containers of a snapshot image (see docker-snapshot-image.ts): not pooled.
    const owner = info.Labels[SANDBOX_LABELS.poolOwner];
    if (owner) {
      // Pooled: idle or handed out, it lives as long as the process that made it.
      if (ownerIsAlive(owner)) continue;
    } else {
      const runId = info.Labels[SANDBOX_LABELS.run];
      const executionId = Number(info.Labels[SANDBOX_LABELS.execution]);
      if (runId && Number.isInteger(executionId) && (await isLive(runId, executionId))) continue;
    }
    try {
      await removeLeftover(host, info, Boolean(owner));
      removed++;
    } catch (error) {
      if (daemonDown(error)) throw unavailable(error);
      // One the daemon cannot remove now (e.g. busy) must not keep those after it: the next
      // sweep retries it.
      logger.warn(`sweep: removing container ${info.Id} failed: ${reason(error)}`);
    }
  }
  return removed;
}

async function removeLeftover(
  host: DockerHost,
  info: Dockerode.ContainerInfo,
  pooled: boolean,
): Promise<void> {
  await host.removeContainer(host.docker.getContainer(info.Id));
  if (pooled) {
    for (const mount of info.Mounts) {
      if (mount.Destination === SANDBOX_PRIVATE_DIR && mount.Source) {
        await removeDirs(mount.Source);
      }
      // A slot never handed out; a handed-out one is a run's workspace now, elsewhere.
      if (mount.Destination === SANDBOX_WORKDIR && isPoolWorkspaceSlot(mount.Source)) {
        await rm(mount.Source, { recursive: true, force: true });
      }
    }
    return;
  }
  const privateMount = info.Mounts.find((m) => m.Destination === SANDBOX_PRIVATE_DIR);
  if (privateMount?.Source) await removeDirs(privateMount.Source);
}
