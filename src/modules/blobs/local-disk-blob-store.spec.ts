import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isValidBlobKey } from './blob-store';
import { LocalDiskBlobStore } from './local-disk-blob-store';

describe('LocalDiskBlobStore', () => {
  let root: string;
  let store: LocalDiskBlobStore;

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'ambient-blobs-'));
    store = new LocalDiskBlobStore(root);
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it('stores, replaces and reads back blobs, leaving no temporary files', async () => {
    expect(await store.get('artifacts/a1')).toBeNull();
    expect(await store.exists('artifacts/a1')).toBe(false);
    await store.put('artifacts/a1', 'first');
    await store.put('artifacts/a1', Buffer.from('second'));
    expect(await store.exists('artifacts/a1')).toBe(true);
    expect(await store.get('artifacts/a1')).toEqual({ data: Buffer.from('second'), size: 6 });
    expect(await readdir(join(root, 'artifacts'))).toEqual(['a1']);
  });

  it('streams a blob with its size, and answers null for a missing one', async () => {
    await store.put('transcripts/t1', 'x'.repeat(100_000));
    const opened = await store.openStream('transcripts/t1');
    let read = '';
    for await (const chunk of opened!.stream) read += String(chunk);
    expect(opened!.size).toBe(100_000);
    expect(read).toBe('x'.repeat(100_000));
    expect(await store.openStream('transcripts/none')).toBeNull();
  });

  it('deletes a blob, and a blob that is not there without an error', async () => {
    await store.put('artifacts/a1', 'gone soon');
    await store.put('artifacts/a2', 'stays');
    await store.delete('artifacts/a1');
    await store.delete('artifacts/a1');
    await store.delete('artifacts/never');
    expect(await store.exists('artifacts/a1')).toBe(false);
    expect(await readdir(join(root, 'artifacts'))).toEqual(['a2']);
    await expect(store.delete('../outside/x')).rejects.toThrow('invalid blob key');
  });

  it('refuses keys that could leave the root', async () => {
    for (const key of ['../x/y', 'a/../../b', 'a/.hidden', 'a', 'a/b/c', '/etc/passwd', 'a/']) {
      expect(isValidBlobKey(key)).toBe(false);
    }
    await expect(store.put('../outside/x', 'no')).rejects.toThrow('invalid blob key');
    expect(isValidBlobKey('transcripts/run-1f0e.jsonl')).toBe(true);
  });
});
