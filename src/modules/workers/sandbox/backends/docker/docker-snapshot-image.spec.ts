import type Dockerode from 'dockerode';
import { SANDBOX_LABELS } from '../../sandbox.types';
import {
  SNAPSHOT_IMAGE_LABELS,
  SnapshotImages,
  snapshotImageChanges,
  snapshotImageTag,
} from './docker-snapshot-image';

const KEY = 'ab'.repeat(32);
const OF = { teamId: 'team_1', environmentId: 'env-1', key: KEY };

/** The labels a LABEL change sets (name="value" pairs). */
function labelsOf(changes: string[]): Record<string, string> {
  expect(changes).toHaveLength(1);
  expect(changes[0]).toMatch(/^LABEL /);
  return Object.fromEntries(
    [...changes[0].matchAll(/([\w.-]+)="([^"]*)"/g)].map(([, name, value]) => [name, value]),
  );
}

describe('snapshot images', () => {
  it('are tagged from the key', () => {
    expect(snapshotImageTag(KEY)).toBe(`ambient-snapshot:${KEY.slice(0, 32)}`);
    expect(() => snapshotImageTag('../x')).toThrow();
  });

  it('say what they are, and empty the sandbox labels a container would inherit', () => {
    const labels = labelsOf(snapshotImageChanges(OF, new Date('2026-11-26T08:00:00Z')));
    expect(labels).toMatchObject({
      [SNAPSHOT_IMAGE_LABELS.snapshot]: '1',
      [SNAPSHOT_IMAGE_LABELS.key]: KEY,
      [SNAPSHOT_IMAGE_LABELS.environment]: 'env-1',
      [SNAPSHOT_IMAGE_LABELS.created]: '2026-11-26T08:00:00.000Z',
      [SANDBOX_LABELS.team]: 'team_1',
      [SANDBOX_LABELS.poolOwner]: '',
      [SANDBOX_LABELS.run]: '',
      [SANDBOX_LABELS.execution]: '',
      [SANDBOX_LABELS.managed]: '',
    });
    // The deployment's label is the container's, inherited: the sweep finds its own images.
    expect(labels).not.toHaveProperty(SANDBOX_LABELS.deployment);
  });

  it('refuse ids that could break out of a label', () => {
    expect(() => snapshotImageChanges({ ...OF, teamId: 'a" b="c' }, new Date())).toThrow();
    expect(() => snapshotImageChanges({ ...OF, key: 'nothex' }, new Date())).toThrow();
  });
});

describe('SnapshotImages', () => {
  const fakeDocker = (remove: () => Promise<unknown>, images: Dockerode.ImageInfo[] = []) => {
    const listImages = jest.fn(async () => images);
    const docker = {
      getImage: () => ({ remove, inspect: async () => ({}) }),
      listImages,
    } as unknown as Dockerode;
    return { docker, listImages };
  };

  it('counts a missing image as removed, one in use as not (the next sweep retries)', async () => {
    const gone = new SnapshotImages(
      fakeDocker(() => Promise.reject(Object.assign(new Error('no'), { statusCode: 404 }))).docker,
      'dep',
    );
    expect(await gone.remove('ambient-snapshot:x')).toBe(true);
    const inUse = new SnapshotImages(
      fakeDocker(() => Promise.reject(Object.assign(new Error('in use'), { statusCode: 409 })))
        .docker,
      'dep',
    );
    expect(await inUse.remove('ambient-snapshot:x')).toBe(false);
    const ok = new SnapshotImages(fakeDocker(async () => [{ Deleted: 'x' }]).docker, 'dep');
    expect(await ok.remove('ambient-snapshot:x')).toBe(true);
  });

  it("lists the deployment's tagged snapshot images with what they belong to", async () => {
    const labels = (key: string) => ({
      [SNAPSHOT_IMAGE_LABELS.snapshot]: '1',
      [SNAPSHOT_IMAGE_LABELS.key]: key,
      [SNAPSHOT_IMAGE_LABELS.environment]: 'env-1',
      [SNAPSHOT_IMAGE_LABELS.created]: '2026-11-26T08:00:00.000Z',
      [SANDBOX_LABELS.team]: 'team_1',
    });
    const { docker, listImages } = fakeDocker(async () => undefined, [
      { Labels: labels(KEY), RepoTags: [snapshotImageTag(KEY)], Created: 1 },
      // Untagged (its tag moved to a newer commit of the same key): a dangling layer, not ours.
      { Labels: labels('cd'.repeat(32)), RepoTags: ['<none>:<none>'], Created: 1 },
      { Labels: labels('bad'), RepoTags: ['ambient-snapshot:bad'], Created: 1 },
    ] as unknown as Dockerode.ImageInfo[]);
    const found = await new SnapshotImages(docker, 'dep').list();
    expect(found).toEqual([
      {
        tag: snapshotImageTag(KEY),
        key: KEY,
        teamId: 'team_1',
        environmentId: 'env-1',
        createdAt: Date.parse('2026-11-26T08:00:00.000Z'),
      },
    ]);
    expect(listImages).toHaveBeenCalledWith({
      filters: {
        label: [`${SNAPSHOT_IMAGE_LABELS.snapshot}=1`, `${SANDBOX_LABELS.deployment}=dep`],
      },
    });
  });
});
