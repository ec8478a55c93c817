import { chmod, mkdir, mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { layerUnchanged, snapshotLayer } from './container-layer';

describe('a container layer snapshot', () => {
  let layer: string;

  beforeEach(async () => {
    layer = await mkdtemp(join(tmpdir(), 'ambient-layer-'));
    await mkdir(join(layer, 'usr', 'sbin'), { recursive: true });
    await writeFile(join(layer, 'usr', 'sbin', 'docker-init'), 'init');
    await mkdir(join(layer, 'home', 'agent'), { recursive: true });
  });

  afterEach(() => rm(layer, { recursive: true, force: true }));

  it('matches the layer it was taken of', async () => {
    const snapshot = (await snapshotLayer(layer))!;
    expect([...snapshot.keys()].sort()).toEqual([
      'home',
      'home/agent',
      'usr',
      'usr/sbin',
      'usr/sbin/docker-init',
    ]);
    expect(await layerUnchanged(layer, snapshot)).toBe(true);
  });

  it.each([
    ['a file written deep down', (dir: string) => writeFile(join(dir, 'home/agent/.state'), 'x')],
    [
      'a file rewritten with the same size',
      (dir: string) => writeFile(join(dir, 'usr/sbin/docker-init'), 'tini'),
    ],
    ['a mode changed', (dir: string) => chmod(join(dir, 'home/agent'), 0o700)],
    ['a file deleted', (dir: string) => unlink(join(dir, 'usr/sbin/docker-init'))],
  ])('differs after %s', async (_what, change) => {
    const snapshot = (await snapshotLayer(layer))!;
    await change(layer);
    expect(await layerUnchanged(layer, snapshot)).toBe(false);
  });

  it('is not taken of a layer that cannot be read, and nothing matches one', async () => {
    const gone = join(layer, 'missing');
    expect(await snapshotLayer(gone)).toBeNull();
    expect(await layerUnchanged(gone, new Map())).toBe(false);
  });
});
