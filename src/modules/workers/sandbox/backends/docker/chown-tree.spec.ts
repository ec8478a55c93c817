import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { chownTree } from './chown-tree';

// 300 walks against a flipping tree: seconds on a busy machine.
jest.setTimeout(60_000);

const SANDBOX_UID = 54321;
// chown needs root, as the docker backend has.
const asRoot = process.getuid?.() === 0 ? describe : describe.skip;

asRoot('chownTree (docker sandbox adopt)', () => {
  let root: string;
  let outside: string;
  let hostFile: string;

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'ambient-chown-'));
    outside = mkdtempSync(join(tmpdir(), 'ambient-chown-host-'));
    hostFile = join(outside, 'secret.txt');
    writeFileSync(hostFile, 'host');
  });

  afterEach(() => {
    rmSync(root, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });

  it('gives the tree to the sandbox user, links themselves but never what they point at', async () => {
    mkdirSync(join(root, 'a'));
    writeFileSync(join(root, 'a', 'b.txt'), 'b');
    symlinkSync(outside, join(root, 'dir-link'));
    symlinkSync(hostFile, join(root, 'file-link'));

    await chownTree(root, SANDBOX_UID, SANDBOX_UID);

    for (const path of [root, join(root, 'a'), join(root, 'a', 'b.txt')]) {
      expect([path, statSync(path).uid]).toEqual([path, SANDBOX_UID]);
    }
    expect(lstatSync(join(root, 'dir-link')).uid).toBe(SANDBOX_UID);
    expect(lstatSync(join(root, 'file-link')).uid).toBe(SANDBOX_UID);
    expect(statSync(outside).uid).toBe(0);
    expect(statSync(hostFile).uid).toBe(0);
  });

  it('never reaches a host directory swapped in for a directory mid-walk', async () => {
    const target = join(root, 'd');
    mkdirSync(target);
    writeFileSync(join(target, 'f.txt'), 'inside');
    const flipper = new Worker(
      `
      const { workerData } = require('node:worker_threads');
      const fs = require('node:fs');
      const { target, outside } = workerData;
      for (let i = 0; i < 2_000_000; i++) {
        const tmp = target + '.tmp';
        try {
          fs.rmSync(tmp, { recursive: true, force: true });
          if (i % 2) fs.symlinkSync(outside, tmp);
          else {
            fs.mkdirSync(tmp);
            fs.writeFileSync(tmp + '/f.txt', 'inside');
          }
          fs.rmSync(target, { recursive: true, force: true });
          fs.renameSync(tmp, target);
        } catch {
          // A removal racing the walk's own reads (ENOTEMPTY, ENOENT): flip again.
        }
      }
      `,
      { eval: true, workerData: { target, outside } },
    );
    // An error the flipper did not expect fails this test, not the whole jest worker.
    const flipperFailed = new Promise<Error>((resolve) => flipper.once('error', resolve));
    let flipperError: Error | undefined;
    void flipperFailed.then((error) => (flipperError = error));
    try {
      for (let i = 0; i < 300; i++) {
        await chownTree(root, SANDBOX_UID, SANDBOX_UID).catch((error: NodeJS.ErrnoException) => {
          // The flipper removes what the walk was about to open: that is not a leak.
          if (!['ENOENT', 'ENOTDIR'].includes(error.code ?? '')) throw error;
        });
        expect(statSync(outside).uid).toBe(0);
        expect(statSync(hostFile).uid).toBe(0);
      }
    } finally {
      await flipper.terminate();
    }
    expect(flipperError).toBeUndefined();
  });
});
