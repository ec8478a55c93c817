import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openProcessSandbox } from '../../sandbox/backends/process/process-sandbox';
import type { Sandbox } from '../../sandbox/sandbox.types';
import { lastLines, runVendorCli } from './vendor-cli-runner';

describe('runVendorCli', () => {
  const cwd = mkdtempSync(join(tmpdir(), 'vendor-cli-'));
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await openProcessSandbox(cwd);
  });
  afterAll(async () => {
    await sandbox.close();
    rmSync(cwd, { recursive: true, force: true });
  });
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
  const run = (script: string, timeoutMs = 10_000, signal = new AbortController().signal) => {
    const lines: string[] = [];
    return runVendorCli({
      sandbox,
      file: '/bin/bash',
      args: ['-c', script],
      env,
      timeoutMs,
      signal,
      onLine: async (line) => {
        await new Promise((r) => setImmediate(r));
        lines.push(line);
      },
    }).then((exit) => ({ exit, lines }));
  };

  it('feeds stdout lines in order, keeps stdout verbatim and the tail of stderr', async () => {
    const { exit, lines } = await run(
      'echo \'{"a":1}\'; echo oops >&2; printf "two\\nlast"; exit 4',
    );
    expect(lines).toEqual(['{"a":1}', 'two', 'last']);
    expect(exit).toMatchObject({
      exitCode: 4,
      timedOut: false,
      aborted: false,
      stderrTail: 'oops',
    });
    expect(exit.stdout).toBe('{"a":1}\ntwo\nlast\n');
  });

  it('reports a binary that does not exist as a start error', async () => {
    const exit = await runVendorCli({
      sandbox,
      file: join(cwd, 'missing-cli'),
      args: [],
      env,
      timeoutMs: 5000,
      signal: new AbortController().signal,
      onLine: async () => undefined,
    });
    expect(exit.startError?.code).toBe('ENOENT');
    expect(exit.exitCode).toBeNull();
  });

  it('kills the process group at the timeout and on abort', async () => {
    const timed = await run('sleep 30 & wait', 300);
    expect(timed.exit).toMatchObject({ timedOut: true, exitCode: null });
    const controller = new AbortController();
    // An abort that comes while the process runs: any moment after spawn would do.
    setTimeout(() => controller.abort(), 200);
    const aborted = await run('sleep 30', 10_000, controller.signal);
    expect(aborted.exit).toMatchObject({ aborted: true, timedOut: false });
  });

  it('lastLines keeps the last non-empty lines', () => {
    expect(lastLines('a\n\nb\nc\n', 2)).toBe('b\nc');
  });
});
