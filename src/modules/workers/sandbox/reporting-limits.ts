import type { Sandbox } from './sandbox.types';

/**
 * The same sandbox, whose limit hits (out of memory, too many processes) also go on the run's
 * timeline as `sandbox_limit_reached` {reason}, beside the tool result that reports them.
 */
export function reportingLimits(
  sandbox: Sandbox,
  emit: (eventType: string, payload?: Record<string, unknown>) => Promise<void>,
): Sandbox {
  return {
    backend: sandbox.backend,
    workdir: sandbox.workdir,
    privateDir: sandbox.privateDir,
    path: sandbox.path,
    apiUrl: sandbox.apiUrl,
    spawn: (file, args, options) => sandbox.spawn(file, args, options),
    adopt: (hostPath) => sandbox.adopt(hostPath),
    close: () => sandbox.close(),
    ...(sandbox.commitSnapshot ? { commitSnapshot: (of) => sandbox.commitSnapshot!(of) } : {}),
    ...(sandbox.lost ? { lost: () => sandbox.lost!() } : {}),
    async limitHit() {
      const reason = await sandbox.limitHit();
      if (reason) await emit('sandbox_limit_reached', { reason }).catch(() => undefined);
      return reason;
    },
  };
}
