import { execFileSync } from 'node:child_process';
import {
  linkSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeTenantDir, writeTenantFile } from './tenant-file-writes';
import { TenantFileError, TenantTree } from './tenant-files';

describe('tenant file writes', () => {
  let base: string;
  let tree: TenantTree;
  let hostFile: string;

  beforeEach(() => {
    base = mkdtempSync(join(tmpdir(), 'tenant-writes-'));
    mkdirSync(join(base, 'tree'));
    mkdirSync(join(base, 'host'));
    hostFile = join(base, 'host/precious');
    writeFileSync(hostFile, 'untouched');
    tree = { root: join(base, 'tree'), label: 'workspace' };
  });
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  const problem = (promise: Promise<unknown>) =>
    promise.then(
      () => 'written',
      (err: unknown) => {
        if (!(err instanceof TenantFileError)) throw err;
        return err.problem;
      },
    );

  it('creates and replaces regular files of the tree', async () => {
    await makeTenantDir(tree, '.attachments');
    await writeTenantFile(tree, '.attachments/a.txt', 'first, longer');
    await writeTenantFile(tree, '.attachments/a.txt', 'second');
    expect(readFileSync(join(tree.root, '.attachments/a.txt'), 'utf8')).toBe('second');
    await makeTenantDir(tree, '.attachments');
  });

  it('never writes through a link the sandbox planted', async () => {
    symlinkSync(hostFile, join(tree.root, 'marker'));
    expect(await problem(writeTenantFile(tree, 'marker', 'x'))).toBe('link');
    linkSync(hostFile, join(tree.root, 'hard'));
    expect(await problem(writeTenantFile(tree, 'hard', 'x'))).toBe('link');
    symlinkSync(join(base, 'host'), join(tree.root, '.attachments'));
    expect(await problem(makeTenantDir(tree, '.attachments'))).toBe('link');
    expect(await problem(writeTenantFile(tree, '.attachments/precious', 'x'))).toBe('link');
    expect(await problem(writeTenantFile(tree, '../host/precious', 'x'))).toBe('outside');
    execFileSync('mkfifo', [join(tree.root, 'pipe')]);
    expect(await problem(writeTenantFile(tree, 'pipe', 'x'))).toBe('not_file');
    expect(readFileSync(hostFile, 'utf8')).toBe('untouched');
  });
});
