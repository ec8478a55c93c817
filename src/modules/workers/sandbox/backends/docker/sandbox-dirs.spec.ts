import { mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  dirIdentity,
  moveWorkspaceInto,
  moveWorkspaceOut,
  recoverReturningDir,
  returningDirOf,
} from './sandbox-dirs';

describe("a pooled container's workspace slot", () => {
  let root: string;
  let slot: string;
  let workspace: string;

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'ambient-slot-'));
    slot = join(root, 'ambient-pool-0123456789abcdef.workspace');
    workspace = join(root, 'run-1');
    await mkdir(slot);
    await mkdir(workspace);
    await writeFile(join(workspace, 'repo.txt'), 'checked out');
  });

  afterEach(() => rm(root, { recursive: true, force: true }));

  it("moves the run's files out at the return: the workspace keeps them, the slot is the container's directory again, empty", async () => {
    const bound = await dirIdentity(slot);
    await moveWorkspaceInto(slot, workspace);
    expect(await dirIdentity(workspace)).toEqual(bound);
    await writeFile(join(workspace, 'written-by-the-run.txt'), 'output');

    await moveWorkspaceOut(slot, workspace, bound);
    expect(await dirIdentity(slot)).toEqual(bound);
    expect(await readdir(slot)).toEqual([]);
    expect((await readdir(workspace)).sort()).toEqual(['repo.txt', 'written-by-the-run.txt']);
    expect(await readFile(join(workspace, 'repo.txt'), 'utf8')).toBe('checked out');
    expect((await stat(workspace)).ino).not.toBe(bound.ino);
    // Nothing else was left beside them.
    expect((await readdir(root)).sort()).toEqual([
      'ambient-pool-0123456789abcdef.workspace',
      'run-1',
    ]);
  });

  it("leaves alone a workspace that is no longer the container's directory", async () => {
    const bound = await dirIdentity(slot);
    await moveWorkspaceInto(slot, workspace);
    // Released meanwhile (renamed away, as an idle workspace is) and made anew.
    await rename(workspace, join(root, 'released'));
    await mkdir(workspace);
    await writeFile(join(workspace, 'other.txt'), 'not the container');
    await expect(moveWorkspaceOut(slot, workspace, bound)).rejects.toThrow(
      "the workspace is no longer the container's directory",
    );
    expect(await readdir(workspace)).toEqual(['other.txt']);
  });

  it('puts back what a process that died in the middle of the move left beside the workspace', async () => {
    await mkdir(returningDirOf(workspace));
    await writeFile(join(returningDirOf(workspace), 'moved-before-the-crash.txt'), 'output');
    await recoverReturningDir(workspace);
    expect((await readdir(workspace)).sort()).toEqual(['moved-before-the-crash.txt', 'repo.txt']);
    expect((await readdir(root)).sort()).toEqual([
      'ambient-pool-0123456789abcdef.workspace',
      'run-1',
    ]);
    // Nothing to put back: nothing changes.
    await recoverReturningDir(workspace);
    expect(await readdir(workspace)).toHaveLength(2);
  });
});
