import type { ChildProcess } from 'node:child_process';
import { PassThrough } from 'node:stream';
import type { SandboxExit, SandboxProcess } from './sandbox.types';

/**
 * A SandboxProcess over a local child process that leads its own process group (`detached`), so
 * `kill` reaches everything it started on this side of the sandbox.
 */
export function childSandboxProcess(child: ChildProcess, onEnd?: () => void): SandboxProcess {
  const exited = new Promise<SandboxExit>((resolve) => {
    let startError: NodeJS.ErrnoException | undefined;
    child.on('error', (err: NodeJS.ErrnoException) => {
      startError = err;
      // Never started: no 'exit' follows.
      if (child.pid === undefined) resolve({ code: null, signal: null, startError: err });
    });
    child.on('exit', (code, signal) => resolve({ code, signal, startError }));
  });
  void exited.then(() => onEnd?.());
  return {
    stdin: child.stdin,
    // A child that failed to spawn has streams that never open; give callers ones that end.
    stdout: child.stdout ?? endedStream(),
    stderr: child.stderr ?? endedStream(),
    exited,
    kill: () => killGroup(child),
  };
}

function endedStream(): PassThrough {
  const stream = new PassThrough();
  stream.end();
  return stream;
}

/** SIGKILLs the process group led by `child` (a no-op once it is gone). */
export function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}
