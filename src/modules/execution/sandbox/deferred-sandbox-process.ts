import { PassThrough } from 'node:stream';
import type { SandboxExit, SandboxProcess } from './sandbox.types';

/**
 * A SandboxProcess whose start waits for `ready` (something the sandbox is still making, e.g.
 * bubblewrap's network namespace): it exists at once for the caller, which may write its stdin
 * and kill it meanwhile, and starts with `start(value)` once `ready` resolves. Killed before that, it
 * never starts and ends as killed; a `start` that throws ends it as not started.
 */
export function deferredSandboxProcess<T>(
  ready: Promise<T>,
  start: (ready: T) => SandboxProcess,
  stdin: 'ignore' | 'pipe',
): SandboxProcess {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const input = stdin === 'pipe' ? new PassThrough() : null;
  let started: SandboxProcess | null = null;
  let killed = false;
  const notStarted = (exit: SandboxExit): SandboxExit => {
    stdout.end();
    stderr.end();
    input?.resume();
    return exit;
  };
  const exited = ready.then(
    (value): Promise<SandboxExit> => {
      if (killed) return Promise.resolve(notStarted({ code: null, signal: 'SIGKILL' }));
      try {
        started = start(value);
      } catch (err) {
        return Promise.resolve(notStarted({ code: null, signal: null, startError: err as Error }));
      }
      started.stdout.pipe(stdout);
      started.stderr.pipe(stderr);
      if (input && started.stdin) input.pipe(started.stdin);
      else input?.resume();
      return started.exited;
    },
    (err: Error) => notStarted({ code: null, signal: null, startError: err }),
  );
  return {
    stdin: input,
    stdout,
    stderr,
    exited,
    kill() {
      killed = true;
      started?.kill();
    },
  };
}
