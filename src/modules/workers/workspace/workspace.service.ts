import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { mkdir, rm, stat } from 'node:fs/promises';
import { basename, join, posix, resolve } from 'node:path';
import { pathComponentProblem } from '../../../common/tenant-files/path-component';
import { makeTenantDir, writeTenantFile } from '../../../common/tenant-files/tenant-file-writes';
import { APP_CONFIG, AppConfig } from '../../../config/app-config';
import { returningDirOf } from '../sandbox/backends/docker/sandbox-dirs';
import type { Sandbox } from '../sandbox/sandbox.types';

/** The only variables of the server's own environment a command may see. */
const INHERITED = ['LANG', 'LC_ALL', 'TZ'];

/**
 * Each run works in its own directory under the workspace root; it survives between executions
 * of the same run so a follow-up continues where the run left off, for the run's idle timeout
 * after an execution ends (`WorkspaceRetentionService` deletes it then).
 */
@Injectable()
export class WorkspaceService implements OnModuleInit {
  private readonly logger = new Logger('Workspaces');
  readonly root: string;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.root = resolve(config.runs.workspaceRoot);
  }

  /**
   * Where Ambient runs as root, what a sandbox writes in its workspace is root's on this host,
   * with the modes it sets, setuid included (docs/SECURITY.md, class 21): the workspace root is
   * made reachable by root alone when Ambient makes it, and a warning says so of one it did not.
   */
  async onModuleInit(): Promise<void> {
    if (process.getuid?.() !== 0) return;
    if ((await mkdir(this.root, { recursive: true, mode: 0o700 })) !== undefined) return;
    // Reachable: searchable by its group or by everyone.
    const { mode } = await stat(this.root);
    if (mode & 0o011) {
      this.logger.warn(
        `the workspace root ${this.root} is reachable by other users of this host while Ambient runs as root: a sandbox can leave setuid-root programs there (chmod 700 it)`,
      );
    }
  }

  dirFor(runId: string): string {
    return join(this.root, runId);
  }

  /**
   * Writes the run's attachments into its workspace; their paths are returned as the sandbox's
   * processes see them.
   */
  async prepare(
    runId: string,
    attachments: { fileName: string; data: Buffer }[],
    sandbox: Pick<Sandbox, 'workdir' | 'adopt'>,
  ): Promise<{ dir: string; attachmentPaths: string[] }> {
    const dir = this.dirFor(runId);
    await mkdir(dir, { recursive: true });
    const attachmentPaths: string[] = [];
    if (attachments.length) {
      // A follow-up's workspace is the sandbox's: `.attachments` may be a link it planted.
      const workspace = { root: dir, label: 'workspace' };
      await makeTenantDir(workspace, '.attachments');
      for (const attachment of attachments) {
        const base = basename(attachment.fileName);
        const name = pathComponentProblem(base) ? 'attachment' : base;
        await writeTenantFile(workspace, `.attachments/${name}`, attachment.data);
        attachmentPaths.push(posix.join(sandbox.workdir, '.attachments', name));
      }
      await sandbox.adopt(join(dir, '.attachments'));
    }
    return { dir, attachmentPaths };
  }

  async remove(runId: string): Promise<void> {
    const dir = this.dirFor(runId);
    await rm(dir, { recursive: true, force: true });
    // What a worker that died while moving the workspace out of a docker container left beside it.
    await rm(returningDirOf(dir), { recursive: true, force: true });
  }

  /**
   * A clean environment for the agent's commands: nothing secret of the server leaks in. The
   * run's `secrets` come first, so none of them can replace a variable Ambient sets (PATH, HOME,
   * AMBIENT_*, the run key).
   */
  commandEnv(
    sandbox: Pick<Sandbox, 'workdir' | 'path'>,
    runId: string,
    extra: Record<string, string> = {},
    secrets: Record<string, string> = {},
  ): Record<string, string> {
    const env: Record<string, string> = { ...secrets };
    for (const name of INHERITED) {
      const value = process.env[name];
      if (value !== undefined) env[name] = value;
    }
    const dir = sandbox.workdir;
    return { ...env, PATH: sandbox.path, HOME: dir, PWD: dir, AMBIENT_RUN_ID: runId, ...extra };
  }
}
