import Dockerode from 'dockerode';
import { SANDBOX_LABELS } from '../../sandbox.types';

/** Local images that hold a prepared container's filesystem (environment snapshots on docker). */
export const SNAPSHOT_IMAGE_REPO = 'ambient-snapshot';

/** Labels of a snapshot image (besides the deployment's, inherited from its container). */
export const SNAPSHOT_IMAGE_LABELS = {
  snapshot: 'dev.ambient.snapshot',
  key: 'dev.ambient.snapshot-key',
  environment: 'dev.ambient.environment-id',
  created: 'dev.ambient.snapshot-created',
} as const;

const KEY = /^[0-9a-f]{64}$/;
const SAFE_ID = /^[A-Za-z0-9_-]{1,64}$/;

export interface SnapshotImageOf {
  teamId: string;
  environmentId: string;
  /** The snapshot key (SHA-256, hex). */
  key: string;
}

export interface SnapshotImageInfo extends SnapshotImageOf {
  tag: string;
  /** When it was committed (ms since the epoch). */
  createdAt: number;
}

/** The image's name: from the key, which already names team and environment. */
export function snapshotImageTag(key: string): string {
  if (!KEY.test(key)) throw new Error('a snapshot key is 64 hex digits');
  return `${SNAPSHOT_IMAGE_REPO}:${key.slice(0, 32)}`;
}

/**
 * The `LABEL` changes of a commit. An image inherits its container's labels, and a container
 * made from the image inherits the image's (a label cannot be removed, only overridden): the
 * sandbox's own labels are emptied, so the image's containers never look pooled (the orphan sweep
 * judges a pool owner by its process) or like another execution's; the deployment label stays,
 * so this deployment's sweep finds its images.
 */
export function snapshotImageChanges(of: SnapshotImageOf, createdAt: Date): string[] {
  if (!SAFE_ID.test(of.teamId) || !SAFE_ID.test(of.environmentId) || !KEY.test(of.key)) {
    throw new Error('invalid snapshot image labels');
  }
  const labels: Record<string, string> = {
    [SANDBOX_LABELS.managed]: '',
    [SANDBOX_LABELS.run]: '',
    [SANDBOX_LABELS.execution]: '',
    [SANDBOX_LABELS.poolOwner]: '',
    [SANDBOX_LABELS.team]: of.teamId,
    [SNAPSHOT_IMAGE_LABELS.snapshot]: '1',
    [SNAPSHOT_IMAGE_LABELS.key]: of.key,
    [SNAPSHOT_IMAGE_LABELS.environment]: of.environmentId,
    [SNAPSHOT_IMAGE_LABELS.created]: createdAt.toISOString(),
  };
  return [
    `LABEL ${Object.entries(labels)
      .map(([name, value]) => `${name}="${value}"`)
      .join(' ')}`,
  ];
}

/**
 * Commits a sandbox's container to the snapshot image of `of`, paused meanwhile (nothing of the
 * tenant's runs or writes during it). Bind mounts (the workspace, the private and killer
 * directories) and the tmpfs /tmp are not part of a commit; the container's configuration holds
 * no secret (commands get theirs per exec). Returns the size of the image's own layer, in bytes.
 */
export async function commitSnapshotImage(
  container: Dockerode.Container,
  of: SnapshotImageOf,
): Promise<number> {
  const docker = new Dockerode({ modem: container.modem } as Dockerode.DockerOptions);
  const tag = snapshotImageTag(of.key);
  const [repo, version] = tag.split(':');
  const base = (await container.inspect()).Image;
  await container.commit({
    repo,
    tag: version,
    pause: true,
    changes: snapshotImageChanges(of, new Date()),
  });
  const [made, parent] = await Promise.all([
    docker.getImage(tag).inspect(),
    docker.getImage(base).inspect(),
  ]);
  return Math.max(0, made.Size - parent.Size);
}

/** The snapshot images of one deployment on a Docker daemon. */
export class SnapshotImages {
  constructor(
    private readonly docker: Dockerode,
    private readonly deployment: string,
  ) {}

  async exists(tag: string): Promise<boolean> {
    try {
      await this.docker.getImage(tag).inspect();
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Removes the image; false when it could not go (a container still uses it, or the daemon does
   * not answer): the next sweep tries again.
   */
  async remove(tag: string): Promise<boolean> {
    try {
      await this.docker.getImage(tag).remove({ noprune: false });
      return true;
    } catch (error) {
      return (error as { statusCode?: number }).statusCode === 404;
    }
  }

  /** This deployment's snapshot images (tagged ones: an untagged one is a dangling layer). */
  async list(): Promise<SnapshotImageInfo[]> {
    const images = await this.docker.listImages({
      filters: {
        label: [
          `${SNAPSHOT_IMAGE_LABELS.snapshot}=1`,
          `${SANDBOX_LABELS.deployment}=${this.deployment}`,
        ],
      },
    });
    const found: SnapshotImageInfo[] = [];
    for (const image of images) {
      const labels = image.Labels ?? {};
      const key = labels[SNAPSHOT_IMAGE_LABELS.key] ?? '';
      if (!KEY.test(key)) continue;
      const tag = snapshotImageTag(key);
      if (!(image.RepoTags ?? []).includes(tag)) continue;
      found.push({
        tag,
        key,
        teamId: labels[SANDBOX_LABELS.team] ?? '',
        environmentId: labels[SNAPSHOT_IMAGE_LABELS.environment] ?? '',
        createdAt: Date.parse(labels[SNAPSHOT_IMAGE_LABELS.created] ?? '') || image.Created * 1000,
      });
    }
    return found;
  }
}
