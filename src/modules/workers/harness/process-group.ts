import type { SandboxProcess } from '../sandbox/sandbox.types';

export interface ProcessGuard {
  readonly timedOut: boolean;
  readonly aborted: boolean;
  /** Stops watching (call once the process has ended). */
  dispose(): void;
}

/**
 * Kills `proc` (and everything it started) when `timeoutMs` passes or `signal` aborts, and
 * remembers which of the two happened.
 */
export function guardProcess(
  proc: Pick<SandboxProcess, 'kill'>,
  timeoutMs: number,
  signal?: AbortSignal,
): ProcessGuard {
  const state = { timedOut: false, aborted: false };
  const onAbort = (): void => {
    state.aborted = true;
    proc.kill();
  };
  const timer = setTimeout(() => {
    state.timedOut = true;
    proc.kill();
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
