import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { listTenantDir, readTenantFile, TenantFileError, TenantTree } from './tenant-files';

const MARKER = 'HOST-SECRET-5f1d0c';

describe('tenant files', () => {
  let base: string;
  let tree: TenantTree;
  let hostFile: string;

  beforeEach(() => {
    base = mkdtempSync(join(tmpdir(), 'tenant-files-'));
    mkdirSync(join(base, 'tree/dir'), { recursive: true });
    mkdirSync(join(base, 'host'));
    hostFile = join(base, 'host/secret');
    writeFileSync(hostFile, MARKER);
    writeFileSync(join(base, 'tree/dir/plain.txt'), 'inside');
    tree = { root: join(base, 'tree'), label: 'workspace' };
  });
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  const refusal = (promise: Promise<unknown>) =>
    promise.then(
      () => {
        throw new Error('expected a refusal');
      },
      (err: unknown) => {
        if (!(err instanceof TenantFileError)) throw err;
        return { problem: err.problem, message: err.message };
      },
    );

  it('reads a regular file of the tree', async () => {
    expect((await readTenantFile(tree, 'dir/plain.txt', 100)).toString()).toBe('inside');
    expect((await readTenantFile(tree, join(tree.root, 'dir/plain.txt'), 100)).toString()).toBe(
      'inside',
    );
  });

  it('refuses a file that is a symbolic link, even to a file inside the tree', async () => {
    symlinkSync(hostFile, join(tree.root, 'leak'));
    symlinkSync('dir/plain.txt', join(tree.root, 'inner'));
    expect(await refusal(readTenantFile(tree, 'leak', 100))).toEqual({
      problem: 'link',
      message: 'leak is a symbolic link',
    });
    expect((await refusal(readTenantFile(tree, 'inner', 100))).problem).toBe('link');
  });

  it('refuses a file reached through a directory link out of the tree', async () => {
    symlinkSync(join(base, 'host'), join(tree.root, 'out'));
    mkdirSync(join(base, 'host/sub'));
    expect(await refusal(readTenantFile(tree, 'out/secret', 100))).toEqual({
      problem: 'outside',
      message: 'out/secret resolves outside the workspace',
    });
    expect((await refusal(listTenantDir(tree, 'out/'))).problem).toBe('link');
    expect((await refusal(listTenantDir(tree, 'out/sub'))).problem).toBe('outside');
  });

  it('refuses paths that leave the tree by name', async () => {
    for (const path of ['../host/secret', hostFile, 'dir/../../host/secret']) {
      expect((await refusal(readTenantFile(tree, path, 100))).problem).toBe('outside');
    }
    expect((await refusal(readTenantFile(tree, 'dir/\0x', 100))).problem).toBe('invalid_path');
  });

  it('refuses FIFOs without blocking, directories and missing files', async () => {
    execFileSync('mkfifo', [join(tree.root, 'pipe')]);
    expect((await refusal(readTenantFile(tree, 'pipe', 100))).problem).toBe('not_file');
    expect((await refusal(readTenantFile(tree, 'dir', 100))).problem).toBe('not_file');
    expect((await refusal(readTenantFile(tree, 'nope', 100))).problem).toBe('missing');
    expect((await refusal(listTenantDir(tree, 'dir/plain.txt'))).problem).toBe('not_directory');
  });

  it('stops reading at the size cap', async () => {
    writeFileSync(join(tree.root, 'big'), Buffer.alloc(300_000, 1));
    expect(await refusal(readTenantFile(tree, 'big', 200_000))).toEqual({
      problem: 'too_large',
      message: 'big is larger than 200000 bytes',
    });
    expect((await readTenantFile(tree, 'big', 300_000)).length).toBe(300_000);
  });

  it('lists a directory without following the links in it', async () => {
    symlinkSync(join(base, 'host'), join(tree.root, 'dir/out'));
    const entries = await listTenantDir(tree, 'dir');
    expect(entries.map((e) => [e.name, e.isDirectory(), e.isSymbolicLink()]).sort()).toEqual([
      ['out', false, true],
      ['plain.txt', false, false],
    ]);
  });

  it('never returns the outside file while the path flips between file and link', async () => {
    const target = join(tree.root, 'flip.txt');
    writeFileSync(target, 'inside');
    const flipper = new Worker(
      `
      const { workerData } = require('node:worker_threads');
      const fs = require('node:fs');
      const { target, hostFile } = workerData;
      for (let i = 0; i < 5_000_000; i++) {
        const tmp = target + '.tmp';
        fs.rmSync(tmp, { force: true });
        if (i % 2) fs.symlinkSync(hostFile, tmp);
        else fs.writeFileSync(tmp, 'inside');
        fs.renameSync(tmp, target);
      }
      `,
      { eval: true, workerData: { target, hostFile } },
    );
    const seen = { read: 0, link: 0, other: 0 };
    try {
      // Until both outcomes were seen (the flipper really raced the reads), at least 200 reads.
      for (let i = 0; i < 20_000 && (i < 200 || !seen.read || !seen.link); i++) {
        try {
          const bytes = await readTenantFile(tree, 'flip.txt', 100);
          expect(bytes.toString()).toBe('inside');
          seen.read++;
        } catch (err) {
          if (!(err instanceof TenantFileError)) throw err;
          expect(err.message).not.toContain(MARKER);
          if (err.problem === 'link') seen.link++;
          else seen.other++;
        }
      }
    } finally {
      await flipper.terminate();
    }
    expect(seen.read + seen.link + seen.other).toBeGreaterThanOrEqual(200);
    expect(seen.read).toBeGreaterThan(0);
    expect(seen.link).toBeGreaterThan(0);
  });
});
