import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { readlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SnapshotStore } from './snapshot-store';

const KEY_A = 'a'.repeat(64);
const KEY_B = 'b'.repeat(64);

describe('SnapshotStore', () => {
  let root: string;
  let store: SnapshotStore;
  const bounds = { maxBytesPerTeam: 10 * 1024 * 1024, maxAgeMs: 60 * 60_000 };

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'ambient-snapshots-'));
    store = new SnapshotStore(join(root, '.snapshots'), bounds);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  /** A workspace directory with `files`. */
  const workspace = (name: string, files: Record<string, string> = {}) => {
    const dir = join(root, name);
    mkdirSync(dir, { recursive: true });
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(dir, path, '..'), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    return dir;
  };

  it('restores what was kept, links as links, into a new workspace', async () => {
    const prepared = workspace('run-1', { 'web/README.md': 'hi\n', 'setup.log': '1\n' });
    symlinkSync('/etc/hostname', join(prepared, 'link'));
    await store.keep('team-1', 'env-1', KEY_A, prepared);

    const next = workspace('run-2');
    expect(await store.restore('team-1', 'env-1', KEY_A, next)).toBe(true);
    expect(readFileSync(join(next, 'web/README.md'), 'utf8')).toBe('hi\n');
    expect(readFileSync(join(next, 'setup.log'), 'utf8')).toBe('1\n');
    expect(await readlink(join(next, 'link'))).toBe('/etc/hostname');

    // A copy: what the second run changes is not in the snapshot.
    writeFileSync(join(next, 'setup.log'), 'changed');
    const third = workspace('run-3');
    expect(await store.restore('team-1', 'env-1', KEY_A, third)).toBe(true);
    expect(readFileSync(join(third, 'setup.log'), 'utf8')).toBe('1\n');
  });

  it('is a miss for another key, environment or team', async () => {
    await store.keep('team-1', 'env-1', KEY_A, workspace('run-1', { a: 'a' }));
    for (const [team, env, key] of [
      ['team-1', 'env-1', KEY_B],
      ['team-1', 'env-2', KEY_A],
      ['team-2', 'env-1', KEY_A],
      ['../team-1', 'env-1', KEY_A],
      ['team-1', 'env-1', '../' + KEY_A.slice(3)],
    ]) {
      const dir = workspace(`miss-${team.length}-${env}-${key.slice(0, 4)}`);
      expect(await store.restore(team, env, key, dir)).toBe(false);
      expect(readdirSync(dir)).toEqual([]);
    }
  });

  it('replaces the environment’s older snapshot when a new key is kept', async () => {
    await store.keep('team-1', 'env-1', KEY_A, workspace('run-1', { v: '1' }));
    await store.keep('team-1', 'env-1', KEY_B, workspace('run-2', { v: '2' }));
    expect(readdirSync(join(root, '.snapshots/team-1/env-1'))).toEqual([KEY_B]);
    expect(await store.restore('team-1', 'env-1', KEY_A, workspace('run-3'))).toBe(false);
  });

  it('holds each team to its size bound, least recently used first, and drops old ones', async () => {
    const small = new SnapshotStore(join(root, '.snapshots'), {
      maxBytesPerTeam: 300 * 1024,
      maxAgeMs: 60 * 60_000,
    });
    const big = 'x'.repeat(120 * 1024);
    await small.keep('team-1', 'env-1', KEY_A, workspace('run-1', { f: big }));
    await small.keep('team-1', 'env-2', KEY_A, workspace('run-2', { f: big }));
    await small.keep('team-2', 'env-1', KEY_A, workspace('run-3', { f: big }));
    // env-1 used since env-2 was kept: env-2 is the least recently used when env-3 comes.
    const record = join(root, '.snapshots/team-1/env-2', KEY_A, 'snapshot.json');
    utimesSync(record, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    await small.keep('team-1', 'env-3', KEY_A, workspace('run-4', { f: big }));
    expect(await small.restore('team-1', 'env-2', KEY_A, workspace('r5'))).toBe(false);
    expect(await small.restore('team-1', 'env-1', KEY_A, workspace('r6'))).toBe(true);
    expect(await small.restore('team-1', 'env-3', KEY_A, workspace('r7'))).toBe(true);
    expect(await small.restore('team-2', 'env-1', KEY_A, workspace('r8'))).toBe(true);

    // Larger than the whole bound: never kept.
    await small.keep('team-3', 'env-1', KEY_A, workspace('run-9', { f: big + big + big }));
    expect(await small.restore('team-3', 'env-1', KEY_A, workspace('r9'))).toBe(false);

    expect(await small.sweep(Date.now() + 2 * 60 * 60_000)).toBe(3);
    expect(await small.restore('team-2', 'env-1', KEY_A, workspace('r10'))).toBe(false);
  });

  it('sweeps the snapshots of environments deleted or changed since they were kept', async () => {
    await store.keep('team-1', 'kept', KEY_A, workspace('run-1', { a: 'a' }));
    await store.keep('team-1', 'changed', KEY_A, workspace('run-2', { a: 'a' }));
    await store.keep('team-1', 'deleted', KEY_A, workspace('run-3', { a: 'a' }));
    const asked: string[][] = [];
    const removed = await store.sweep(Date.now(), async (ids) => {
      asked.push([...ids].sort());
      return new Map([
        ['kept', Date.now() - 60_000],
        ['changed', Date.now() + 1000],
      ]);
    });
    expect(asked).toEqual([['changed', 'deleted', 'kept']]);
    expect(removed).toBe(2);
    expect(readdirSync(join(root, '.snapshots/team-1')).sort()).toEqual([
      'changed',
      'deleted',
      'kept',
    ]);
    expect(await store.restore('team-1', 'kept', KEY_A, workspace('r4'))).toBe(true);
    expect(await store.restore('team-1', 'changed', KEY_A, workspace('r5'))).toBe(false);
    expect(await store.restore('team-1', 'deleted', KEY_A, workspace('r6'))).toBe(false);
  });

  it('sweeps what a crash left half-written, not what is being written now', async () => {
    const envDir = join(root, '.snapshots/team-1/env-1');
    mkdirSync(join(envDir, '.tmp-crashed/workspace'), { recursive: true });
    mkdirSync(join(envDir, '.tmp-writing/workspace'), { recursive: true });
    const old = new Date(Date.now() - 2 * 60 * 60_000);
    utimesSync(join(envDir, '.tmp-crashed'), old, old);
    await store.sweep();
    expect(existsSync(join(envDir, '.tmp-crashed'))).toBe(false);
    expect(existsSync(join(envDir, '.tmp-writing'))).toBe(true);
  });

  describe('with images (docker)', () => {
    let removed: string[];
    beforeEach(() => {
      removed = [];
      store = new SnapshotStore(join(root, '.snapshots'), bounds, async (tag) => {
        removed.push(tag);
      });
    });

    it('owns its image: size counted, image told, removed with the snapshot of an old key', async () => {
      const prepared = workspace('run-1', { 'a.txt': 'a' });
      await store.keep('team-1', 'env-1', KEY_A, prepared, { tag: 'snap:a', sizeBytes: 4096 });
      expect(await store.imageOf('team-1', 'env-1', KEY_A)).toBe('snap:a');
      expect(await store.has('team-1', 'env-1', KEY_A)).toBe(true);
      const record = JSON.parse(
        readFileSync(join(root, '.snapshots', 'team-1', 'env-1', KEY_A, 'snapshot.json'), 'utf8'),
      );
      expect(record.size_bytes).toBeGreaterThanOrEqual(4096);

      // The same key again: its tag now names the new image, which must stay.
      await store.keep('team-1', 'env-1', KEY_A, prepared, { tag: 'snap:a', sizeBytes: 4096 });
      expect(removed).toEqual([]);

      await store.keep('team-1', 'env-1', KEY_B, prepared, { tag: 'snap:b', sizeBytes: 1 });
      expect(removed).toEqual(['snap:a']);
      expect(await store.has('team-1', 'env-1', KEY_A)).toBe(false);
      expect(await store.imageOf('team-1', 'env-1', KEY_B)).toBe('snap:b');
    });

    it('removes an image whose snapshot is too large to keep', async () => {
      const prepared = workspace('run-1', { 'a.txt': 'a' });
      await store.keep('team-1', 'env-1', KEY_A, prepared, {
        tag: 'snap:a',
        sizeBytes: bounds.maxBytesPerTeam + 1,
      });
      expect(removed).toEqual(['snap:a']);
      expect(await store.has('team-1', 'env-1', KEY_A)).toBe(false);
    });

    it('counts images in the team bound and removes those swept', async () => {
      const prepared = workspace('run-1', { 'a.txt': 'a' });
      const half = bounds.maxBytesPerTeam / 2 + 1;
      await store.keep('team-1', 'env-1', KEY_A, prepared, { tag: 'snap:a', sizeBytes: half });
      await store.keep('team-1', 'env-2', KEY_B, prepared, { tag: 'snap:b', sizeBytes: half });
      // The least recently used goes, and its image with it.
      expect(removed).toEqual(['snap:a']);
      await store.sweep(Date.now() + bounds.maxAgeMs + 1);
      expect(removed).toEqual(['snap:a', 'snap:b']);
    });

    it('has no image for a snapshot past its age', async () => {
      await store.keep('team-1', 'env-1', KEY_A, workspace('run-1'), {
        tag: 'snap:a',
        sizeBytes: 1,
      });
      const record = join(root, '.snapshots', 'team-1', 'env-1', KEY_A, 'snapshot.json');
      const old = JSON.parse(readFileSync(record, 'utf8'));
      old.created_at = new Date(Date.now() - bounds.maxAgeMs - 1000).toISOString();
      writeFileSync(record, JSON.stringify(old));
      expect(await store.imageOf('team-1', 'env-1', KEY_A)).toBeNull();
      expect(await store.imageOf('team-1', 'env-1', KEY_B)).toBeNull();
    });
  });
});
