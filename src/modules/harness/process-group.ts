import { ChildProcess, spawn } from 'node:child_process';

export interface ProcessGroupOptions {
  cwd: string;
  /** The complete environment of the process; nothing is inherited from this one. */
  env: Record<string, string>;
  /** Standard input: ignored by default. */
  stdin?: 'ignore' | 'pipe';
}

/** Starts `file` as the leader of a new process group, so everything it starts can be killed. */
export function spawnProcessGroup(
  file: string,
  args: string[],
  opts: ProcessGroupOptions,
): ChildProcess {
  return spawn(file, args, {
    cwd: opts.cwd,
    env: opts.env,
    detached: true,
    stdio: [opts.stdin ?? 'ignore', 'pipe', 'pipe'],
  });
}

/** SIGKILLs the whole process group led by `child` (a no-op when it is already gone). */
export function killProcessGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // The group is already gone.
  }
}

export interface ProcessGroupGuard {
  readonly timedOut: boolean;
  readonly aborted: boolean;
  /** Stops watching (call once the process has ended). */
  dispose(): void;
}

/**
 * Kills the process group of `child` when `timeoutMs` passes or `signal` aborts, and remembers
 * which of the two happened.
 */
export function guardProcessGroup(
  child: ChildProcess,
  timeoutMs: number,
  signal?: AbortSignal,
): ProcessGroupGuard {
  const state = { timedOut: false, aborted: false };
  const onAbort = (): void => {
    state.aborted = true;
    killProcessGroup(child);
  };
  const timer = setTimeout(() => {
    state.timedOut = true;
    killProcessGroup(child);
  }, timeoutMs);
  signal?.addEventListener('abort', onAbort, { once: true });
  if (signal?.aborted) onAbort();
  return {
    get timedOut() {
      return state.timedOut;
    },
    get aborted() {
      return state.aborted;
    },
    dispose() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    },
  };
}
