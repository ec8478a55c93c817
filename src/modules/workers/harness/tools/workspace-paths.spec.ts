import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveInWorkspace, WorkspacePathError } from './workspace-paths';

describe('resolveInWorkspace', () => {
  let root: string;
  let outside: string;

  beforeEach(() => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'ambient-ws-')));
    outside = realpathSync(mkdtempSync(join(tmpdir(), 'ambient-outside-')));
    mkdirSync(join(root, 'src'));
    writeFileSync(join(root, 'src/a.txt'), 'a');
    writeFileSync(join(outside, 'secret.txt'), 'secret');
  });
  afterEach(() => {
    rmSync(root, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });

  it('resolves existing and new paths inside the workspace', async () => {
    expect(await resolveInWorkspace(root, 'src/a.txt')).toBe(join(root, 'src/a.txt'));
    expect(await resolveInWorkspace(root, 'src/../src/new/b.txt')).toBe(
      join(root, 'src/new/b.txt'),
    );
    expect(await resolveInWorkspace(root, '.')).toBe(root);
  });

  it('refuses absolute paths and .. escapes', async () => {
    await expect(resolveInWorkspace(root, '/etc/passwd')).rejects.toThrow(/is absolute/);
    await expect(resolveInWorkspace(root, '../x')).rejects.toThrow(/outside the workspace/);
    await expect(resolveInWorkspace(root, 'src/../../x')).rejects.toBeInstanceOf(
      WorkspacePathError,
    );
  });

  it('refuses symlinks to files and directories outside, also dangling ones', async () => {
    symlinkSync(join(outside, 'secret.txt'), join(root, 'link.txt'));
    symlinkSync(outside, join(root, 'linkdir'));
    symlinkSync(join(outside, 'not-yet.txt'), join(root, 'dangling.txt'));
    symlinkSync(join(root, 'src/a.txt'), join(root, 'inside.txt'));
    await expect(resolveInWorkspace(root, 'link.txt')).rejects.toThrow(/through a symlink/);
    await expect(resolveInWorkspace(root, 'linkdir/secret.txt')).rejects.toThrow(/symlink/);
    await expect(resolveInWorkspace(root, 'linkdir/new.txt')).rejects.toThrow(/symlink/);
    await expect(resolveInWorkspace(root, 'dangling.txt')).rejects.toThrow(/symlink/);
    expect(await resolveInWorkspace(root, 'inside.txt')).toBe(join(root, 'inside.txt'));
  });
});
