import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
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
  let flipper: Worker | undefined;

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
    // A thread, not a shell loop: once terminate() resolves nothing renames in root any more
    // (a SIGKILLed shell's mv could still finish after it, and the rm below saw ENOTEMPTY).
    await flipper?.terminate();
    flipper = undefined;
    await sandbox.close();
    rmSync(root, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });

  it('never lists or searches the host directory', async () => {
    // What a process in the sandbox could do: d is now the directory, now a symlink out.
    flipper = new Worker(
      `
      const { workerData } = require('node:worker_threads');
      const fs = require('node:fs');
      const { root, outside } = workerData;
      // Each state held a few ms, as long as a shell's mv or ln takes to start.
      const pause = () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 3);
      for (let i = 0; i < 1_000_000; i++) {
        fs.renameSync(root + '/d', root + '/d.real');
        pause();
        fs.symlinkSync(outside, root + '/d');
        pause();
        fs.unlinkSync(root + '/d');
        fs.renameSync(root + '/d.real', root + '/d');
        pause();
      }
      `,
      { eval: true, workerData: { root, outside } },
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
