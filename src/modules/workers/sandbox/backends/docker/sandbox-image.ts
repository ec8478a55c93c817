import type Dockerode from 'dockerode';
import { Logger } from '@nestjs/common';
import { SandboxError } from '../../sandbox.types';
import { daemonDown, isNotFound, reason, unavailable } from './docker-errors';

const pullLogger = new Logger('Sandbox');

/** What to do when AMBIENT_DOCKER_IMAGE (the image of environments without one) is not there. */
export function missingImageFix(image: string): string {
  return (
    `image "${image}" is missing: build it with sandbox/agent-image/build-image.sh --tag ${image} ` +
    '(or docker pull it, or set AMBIENT_DOCKER_IMAGE)'
  );
}

/**
 * The start-up check of the default image: what to do when the daemon does not have it, or null
 * (also when the daemon's answer is not a clear "no such image": runs then say what it is).
 */
export async function defaultImageProblem(
  docker: Dockerode,
  image: string,
): Promise<string | null> {
  try {
    await docker.getImage(image).inspect();
    return null;
  } catch (error) {
    return isNotFound(error) ? missingImageFix(image) : null;
  }
}

/** A default image that cannot be pulled is the operator's to build (the shipped one is local). */
export async function ensureImage(
  docker: Dockerode,
  image: string,
  isDefault: boolean,
): Promise<void> {
  try {
    await docker.getImage(image).inspect();
    return;
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
  try {
    const stream = await docker.pull(image);
    await new Promise<void>((resolvePull, rejectPull) =>
      docker.modem.followProgress(stream, (error: Error | null) =>
        error ? rejectPull(error) : resolvePull(),
      ),
    );
    await docker.getImage(image).inspect();
  } catch (error) {
    if (daemonDown(error)) throw unavailable(error);
    if (isDefault) throw new SandboxError(missingImageFix(image), 'environment_setup_failed');
    // The daemon's answer may hold what it reached (a registry's, or any port's, first bytes):
    // for the operator's log only.
    pullLogger.warn(`pulling image ${JSON.stringify(image)} failed: ${reason(error)}`);
    throw new SandboxError(`the image "${image}" could not be pulled`, 'environment_setup_failed');
  }
}
