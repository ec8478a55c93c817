import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isRunning } from '../../../../test/support/processes';
import { waitFor } from '../../../../test/support/wait';
import { openProcessSandbox } from '../sandbox/backends/process/process-sandbox';
import { SandboxLostError, type Sandbox } from '../sandbox/sandbox.types';
import { runCommand } from './command-runner';

const PATH = '/usr/local/bin:/usr/bin:/bin';

/** Waits for a synchronous condition (a file, a process) with the shared poller. */
const waitUntil = (condition: () => boolean, what: string, timeoutMs = 10_000) =>
  waitFor(async () => condition(), Boolean, { timeoutMs, intervalMs: 10, what });

describe('runCommand', () => {
  let dir: string;
  let sandbox: Sandbox;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ambient-cmd-'));
    sandbox = await openProcessSandbox(dir);
  });
  afterEach(async () => {
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const run = (command: string, extra: Partial<Parameters<typeof runCommand>[0]> = {}) =>
    runCommand({ sandbox, command, env: { PATH }, timeoutMs: 10_000, ...extra });

  it('returns combined stdout and stderr with the exit code', async () => {
    const result = await run('for i in 1 2 3; do echo out$i; echo err$i >&2; done; exit 3');
    expect(result).toEqual({
      exitCode: 3,
      output: 'out1\nerr1\nout2\nerr2\nout3\nerr3\n',
      timedOut: false,
      aborted: false,
      limitHit: null,
    });
  });

  it('runs in the given directory with exactly the given environment', async () => {
    process.env.AMBIENT_LEAK_CHECK = 'leaked';
    try {
      const result = await run('pwd; echo "leak=${AMBIENT_LEAK_CHECK:-none} mine=$MINE"', {
        env: { PATH, MINE: 'yes' },
      });
      expect(result.output).toBe(`${dir}\nleak=none mine=yes\n`);
    } finally {
      delete process.env.AMBIENT_LEAK_CHECK;
    }
  });

  it('finds bash without PATH in the environment', async () => {
    const result = await run('echo ok', { env: {} });
    expect(result.output).toBe('ok\n');
  });

  it('keeps the head and the tail of long output', async () => {
    const result = await run('echo START; head -c 100000 /dev/zero | tr "\\0" x; echo; echo END', {
      maxOutputBytes: 1000,
    });
    expect(result.output.startsWith('START\n')).toBe(true);
    expect(result.output.endsWith('x\nEND\n')).toBe(true);
    expect(result.output).toMatch(/\[\.\.\. \d+ bytes of output omitted \.\.\.\]/);
    expect(result.output.length).toBeLessThan(1100);
  });

  it('kills the whole process group on timeout', async () => {
    const result = await run('sleep 30 & echo $! > child.pid; wait', { timeoutMs: 300 });
    expect(result.timedOut).toBe(true);
    expect(result.exitCode).toBeNull();
    const childPid = Number(readFileSync(join(dir, 'child.pid'), 'utf8'));
    await waitUntil(() => !isRunning(childPid), 'the background sleep to die');
  });

  it('kills the whole process group when aborted', async () => {
    const controller = new AbortController();
    const pending = run('sleep 30 & echo $! > child.pid; wait', { signal: controller.signal });
    await waitUntil(() => existsSync(join(dir, 'child.pid')), 'the command to start');
    const childPid = Number(readFileSync(join(dir, 'child.pid'), 'utf8'));
    controller.abort();
    const result = await pending;
    expect(result).toMatchObject({ aborted: true, timedOut: false, exitCode: null });
    await waitUntil(() => !isRunning(childPid), 'the background sleep to die');
  });

  it('does not start when the signal is already aborted', async () => {
    const result = await run('touch started', { signal: AbortSignal.abort() });
    expect(result.aborted).toBe(true);
    expect(existsSync(join(dir, 'started'))).toBe(false);
  });

  it('does not wait for a background process that keeps the output open, and ends it', async () => {
    const started = Date.now();
    const result = await run('sleep 30 & echo $!');
    const childPid = Number(result.output.trim());
    expect(result.exitCode).toBe(0);
    // Far from the 30 s sleep, with room for a loaded machine's fork and exec.
    expect(Date.now() - started).toBeLessThan(15_000);
    await waitUntil(() => !isRunning(childPid), 'the background sleep to die');
  });

  it('reports a command that cannot start', async () => {
    const result = await run('true', { cwd: join(dir, 'missing') });
    expect(result.exitCode).toBeNull();
    expect(result.output).toContain('failed to start command');
  });

  it('throws, rather than reporting a failed command, once the sandbox is lost', async () => {
    const lost = { ...sandbox, lost: () => Promise.resolve('its container no longer exists') };
    await expect(
      runCommand({ sandbox: lost, command: 'kill -9 $$', env: { PATH }, timeoutMs: 10_000 }),
    ).rejects.toThrow(new SandboxLostError('its container no longer exists'));
    // A command killed in a sandbox that is still there is the command's own failure.
    const alive = { ...sandbox, lost: () => Promise.resolve(null) };
    const result = await runCommand({
      sandbox: alive,
      command: 'kill -9 $$',
      env: { PATH },
      timeoutMs: 10_000,
    });
    expect(result.exitCode).toBeNull();
  });
});
