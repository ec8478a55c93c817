import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openProcessSandbox } from '../../sandbox/backends/process/process-sandbox';
import type { Sandbox } from '../../sandbox/sandbox.types';
import { McpToolset } from '../mcp/mcp-toolset';
import { Toolbox } from './toolbox';

/**
 * list_files and search_files run on this host: a directory of the workspace swapped for a
 * symlink to a host directory while they walk must never show the host directory's names or
 * contents (issue 19, class 2).
 */
describe('list_files and search_files against a directory swapped for a symlink', () => {
  const CALLS = 60;
  let root: string;
  let outside: string;
  let sandbox: Sandbox;
  let flipper: ChildProcess | undefined;

  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), 'ambient-walk-race-'));
    outside = mkdtempSync(join(tmpdir(), 'ambient-walk-outside-'));
    writeFileSync(join(outside, 'f.txt'), 'top secret\n');
    writeFileSync(join(outside, 'host-only-name.txt'), 'top secret\n');
    mkdirSync(join(root, 'd'));
    writeFileSync(join(root, 'd', 'f.txt'), 'inside\n');
    sandbox = await openProcessSandbox(root);
  });

  afterEach(async () => {
    if (flipper?.pid !== undefined && flipper.exitCode === null) {
      const exited = new Promise((resolve) => flipper!.once('exit', resolve));
      process.kill(flipper.pid, 'SIGKILL');
      await exited;
    }
    await sandbox.close();
    rmSync(root, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });

  it('never lists or searches the host directory', async () => {
    // What a process in the sandbox could do: d is now the directory, now a symlink out.
    flipper = spawn(
      'bash',
      [
        '-c',
        'while :; do mv -T d d.real; ln -s "$1" d; rm d; mv -T d.real d; done',
        'flip',
        outside,
      ],
      { cwd: root, stdio: 'ignore' },
    );
    const toolbox = new Toolbox(
      {
        workspaceDir: root,
        sandbox,
        commandEnv: { PATH: '/usr/bin:/bin' },
        commandTimeoutSeconds: 10,
        signal: new AbortController().signal,
        mode: 'normal',
      },
      McpToolset.empty(),
    );
    const outputs: string[] = [];
    for (let i = 0; i < CALLS; i++) {
      for (const [name, args] of [
        ['list_files', { path: 'd' }],
        ['list_files', { recursive: true }],
        ['search_files', { pattern: 'secret|inside', path: 'd' }],
        ['search_files', { pattern: 'secret|inside' }],
      ] as const) {
        outputs.push((await toolbox.run(name, args)).content);
      }
    }
    expect(outputs.filter((out) => /top secret|host-only-name/.test(out))).toEqual([]);
    // The walks did run while d was a directory.
    expect(outputs.some((out) => out.includes('d/f.txt:1: inside'))).toBe(true);
  }, 120_000);
});
