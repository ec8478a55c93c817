import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openProcessSandbox } from '../../sandbox/backends/process/process-sandbox';
import type { Sandbox } from '../../sandbox/sandbox.types';
import { McpToolset } from '../mcp/mcp-toolset';
import { MAX_READ_CHARS } from './file-tools';
import { Toolbox } from './toolbox';

// Each file tool call is a process spawn inside the sandbox: a busy machine needs more than 5 s
// for the tests that make a dozen of them.
jest.setTimeout(30_000);

describe('Toolbox (built-in tools)', () => {
  let root: string;
  let outside: string;
  let sandbox: Sandbox;
  const toolbox = (mode = 'normal', commandTimeoutSeconds = 10) =>
    new Toolbox(
      {
        workspaceDir: root,
        sandbox,
        commandEnv: { PATH: '/usr/bin:/bin' },
        commandTimeoutSeconds,
        signal: new AbortController().signal,
        mode,
      },
      McpToolset.empty(),
    );
  const run = async (name: string, args: Record<string, unknown>, mode?: string) =>
    (await toolbox(mode).run(name, args)).content;

  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), 'ambient-tools-'));
    outside = mkdtempSync(join(tmpdir(), 'ambient-outside-'));
    sandbox = await openProcessSandbox(root);
  });
  afterEach(async () => {
    await sandbox.close();
    rmSync(root, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });

  it('writes, edits, reads and searches files', async () => {
    expect(
      await run('write_file', { path: 'src/app.ts', content: 'let a = 1;\nlet b = 1;\n' }),
    ).toBe('Wrote 22 bytes to src/app.ts.');
    expect(
      await run('edit_file', { path: 'src/app.ts', old_string: 'b = 1', new_string: 'b = 2' }),
    ).toBe('Replaced 1 occurrence in src/app.ts.');
    expect(readFileSync(join(root, 'src/app.ts'), 'utf8')).toBe('let a = 1;\nlet b = 2;\n');
    expect(await run('read_file', { path: 'src/app.ts' })).toBe(
      '     1\tlet a = 1;\n     2\tlet b = 2;\n',
    );
    expect(await run('read_file', { path: 'src/app.ts', offset: 2, limit: 1 })).toBe(
      '     2\tlet b = 2;\n',
    );
    writeFileSync(join(root, 'notes.md'), 'let it be\n');
    expect(await run('search_files', { pattern: 'let \\w = \\d' })).toBe(
      'src/app.ts:1: let a = 1;\nsrc/app.ts:2: let b = 2;',
    );
    expect(await run('search_files', { pattern: 'let', glob: '*.md' })).toBe(
      'notes.md:1: let it be',
    );
    expect(await run('search_files', { pattern: 'nothing-like-this' })).toBe('No matches.');
    expect(await run('list_files', {})).toBe('notes.md\nsrc/');
    expect(await run('list_files', { recursive: true })).toBe('notes.md\nsrc/\nsrc/app.ts');
    expect(await run('list_files', { path: 'src' })).toBe('src/app.ts');
  });

  it('explains edits that match nothing or several places and changes nothing', async () => {
    writeFileSync(join(root, 'f.txt'), 'x x x');
    expect(await run('edit_file', { path: 'f.txt', old_string: 'y', new_string: 'z' })).toMatch(
      /^Error: old_string was not found in f.txt/,
    );
    expect(await run('edit_file', { path: 'f.txt', old_string: 'x', new_string: 'z' })).toMatch(
      /^Error: old_string occurs 3 times in f.txt; nothing changed/,
    );
    expect(readFileSync(join(root, 'f.txt'), 'utf8')).toBe('x x x');
    expect(
      await run('edit_file', {
        path: 'f.txt',
        old_string: 'x',
        new_string: 'z',
        replace_all: true,
      }),
    ).toBe('Replaced 3 occurrences in f.txt.');
    expect(readFileSync(join(root, 'f.txt'), 'utf8')).toBe('z z z');
  });

  it('keeps every tool inside the workspace', async () => {
    writeFileSync(join(outside, 'secret.txt'), 'top secret');
    symlinkSync(join(outside, 'secret.txt'), join(root, 'link.txt'));
    symlinkSync(outside, join(root, 'out'));
    expect(await run('read_file', { path: '/etc/passwd' })).toMatch(/^Error: .*is absolute/);
    expect(await run('read_file', { path: '../x' })).toMatch(/outside the workspace/);
    expect(await run('read_file', { path: 'link.txt' })).toMatch(/through a symlink/);
    expect(await run('write_file', { path: 'out/new.txt', content: 'x' })).toMatch(/symlink/);
    expect(await run('write_file', { path: 'link.txt', content: 'x' })).toMatch(/symlink/);
    expect(
      await run('edit_file', { path: 'link.txt', old_string: 'top', new_string: 'no' }),
    ).toMatch(/symlink/);
    expect(await run('list_files', { path: 'out' })).toMatch(/symlink/);
    expect(await run('search_files', { pattern: 'secret', path: '..' })).toMatch(/outside/);
    // A walk lists symlinks but never follows them.
    expect(await run('search_files', { pattern: 'secret' })).toBe('No matches.');
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('top secret');
  });

  it('caps output and pages long files', async () => {
    writeFileSync(join(root, 'big.txt'), `${'y'.repeat(1000)}\n`.repeat(200));
    const page = await run('read_file', { path: 'big.txt' });
    expect(page.length).toBeLessThan(MAX_READ_CHARS + 200);
    expect(page).toMatch(/more lines; continue with offset \d+\.\n$/);
    mkdirSync(join(root, 'many'));
    for (let i = 0; i < 30; i++) writeFileSync(join(root, 'many', `f${i}.txt`), 'hit\n');
    expect((await run('list_files', { path: 'many', limit: 5 })).split('\n')).toHaveLength(6);
    expect(await run('search_files', { pattern: 'hit', limit: 3 })).toMatch(
      /^(many\/f\d+\.txt:1: hit\n){3}… more matches/,
    );
  });

  it('rejects bad arguments with a clear tool error', async () => {
    expect(await run('read_file', {})).toBe('Error: "path" must be a non-empty string.');
    expect(await run('read_file', { path: 'missing.txt' })).toBe(
      'Error: missing.txt does not exist.',
    );
    expect(await run('read_file', { path: 'a', offset: 0 })).toMatch(/"offset" must be a positive/);
    expect(await run('search_files', { pattern: '(' })).toMatch(/not a valid regular expression/);
    writeFileSync(join(root, 'bin.dat'), Buffer.from([1, 0, 2]));
    expect(await run('read_file', { path: 'bin.dat' })).toBe('Error: bin.dat is a binary file.');
  });

  it('refuses FIFOs and directories without waiting on them', async () => {
    execFileSync('mkfifo', [join(root, 'pipe')]);
    mkdirSync(join(root, 'dir'));
    expect(await run('read_file', { path: 'pipe' })).toBe('Error: pipe is not a regular file.');
    expect(await run('read_file', { path: 'dir' })).toBe(
      'Error: dir is a directory; use list_files.',
    );
    expect(await run('write_file', { path: 'dir', content: 'x' })).toBe(
      'Error: dir is a directory.',
    );
    expect(await run('search_files', { pattern: 'x' })).toBe('No matches.');
  });

  it('stops a search whose regular expression backtracks without end', async () => {
    writeFileSync(join(root, 'evil.txt'), `${'a'.repeat(40)}b\n`);
    const started = Date.now();
    const slow = await toolbox('normal', 1).run('search_files', { pattern: '^(a+)+$' });
    expect(slow.content).toMatch(/^Error: the search took longer than 1 seconds/);
    // Stopped, not run to its end (which would take far longer); a loaded machine's worker start counts too.
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('refuses write tools in plan mode and still reads', async () => {
    writeFileSync(join(root, 'f.txt'), 'keep');
    expect(await run('write_file', { path: 'f.txt', content: 'x' }, 'plan')).toMatch(
      /^Denied: write_file is not available in plan mode/,
    );
    expect(
      await run('edit_file', { path: 'f.txt', old_string: 'keep', new_string: 'x' }, 'plan'),
    ).toMatch(/^Denied: edit_file is not available in plan mode/);
    expect(readFileSync(join(root, 'f.txt'), 'utf8')).toBe('keep');
    expect(await run('read_file', { path: 'f.txt' }, 'plan')).toBe('     1\tkeep\n');
  });
});
