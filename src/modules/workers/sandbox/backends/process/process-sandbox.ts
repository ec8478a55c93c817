import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnOffLoop } from '../../off-loop-spawn';
import type { Sandbox, SandboxBackend, SandboxProcess, SandboxSpec } from '../../sandbox.types';

/**
 * No isolation: processes run as the service's own user on its host, in the workspace
 * directory. Only for development, when `AMBIENT_SANDBOX=process` is set explicitly.
 */
export class ProcessSandboxBackend implements SandboxBackend {
  readonly name = 'process' as const;

  async open(spec: SandboxSpec): Promise<Sandbox> {
    const privateDir = await mkdtemp(join(tmpdir(), 'ambient-private-'));
    const running = new Set<SandboxProcess>();
    return {
      backend: this.name,
      workdir: spec.workspaceDir,
      privateDir: { host: privateDir, inside: privateDir },
      path: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
      apiUrl: spec.apiUrl,
      spawn(file, args, options) {
        const proc = spawnOffLoop(file, args, {
          cwd: options.cwd ?? spec.workspaceDir,
          env: options.env,
          stdin: options.stdin ?? 'ignore',
        });
        running.add(proc);
        void proc.exited.then(() => running.delete(proc));
        return proc;
      },
      limitHit: () => Promise.resolve(null),
      adopt: () => Promise.resolve(),
      async close() {
        for (const proc of running) proc.kill();
        await rm(privateDir, { recursive: true, force: true });
      },
    };
  }
}

/** A `process` sandbox over `workspaceDir` (unit tests of what runs programs). */
export function openProcessSandbox(workspaceDir: string): Promise<Sandbox> {
  return new ProcessSandboxBackend().open({
    runId: 'local',
    executionId: 1,
    teamId: 'local',
    workspaceDir,
    image: null,
    network: 'none',
    limits: { memoryMb: 512, pids: 128, cpus: 1 },
    apiUrl: null,
  });
}
