import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { EgressGuard, EgressRefusedError } from '../../../../common/egress/egress-guard';
import { gitEnv } from '../../../../common/git';
import { DefinitionFile } from '../definition/definition.types';
import { readDefinitionTree } from './git-definition-tree';
import { pinnedRemote, type PinnedRemote } from './git-egress';

const run = promisify(execFile);
const GIT_TIMEOUT_MS = 60_000;
/** Top-level entries of a definition; the rest of a repository is never read. */
const DEFINITION_ROOTS = [
  'factory.yaml',
  'agents',
  'automations',
  'webhooks',
  'runners',
  'skills',
  'benchmarks',
  'scorers',
];

export interface RepositoryLocation {
  url: string;
  branch: string;
  /** Directory of the definition inside the repository ('' = root). */
  path: string;
}

/** Raised for a repository that cannot be read; the message is safe to show the user. */
export class RepositoryError extends Error {}

/** The git transport a URL uses, or null when it is not one git understands. */
export function protocolOf(url: string): string | null {
  if (url.startsWith('-')) return null;
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url)?.[1]?.toLowerCase();
  if (scheme) return scheme === 'git+ssh' || scheme === 'ssh+git' ? 'ssh' : scheme;
  if (url.startsWith('/')) return 'file';
  if (/^[\w.-]+@[\w.-]+:/.test(url)) return 'ssh';
  return null;
}

/**
 * Reads a production branch with the `git` command line. Only the configured transports are
 * allowed (GIT_ALLOW_PROTOCOL), so `ext::` and friends can never run a command, and git never
 * prompts for credentials.
 *
 * Why outside the Sandbox boundary: this is the service's own tool, not agent-controlled code.
 * No agent runs here; git only fetches and reads the definition files (no checkout hooks, no
 * repository code is executed), with fixed arguments and a URL limited to the allowed transports.
 * The URL is the tenant's: every command's connection is checked and pinned by the egress guard.
 * The `git -C` reads run in the bare clone, whose config and hooks are git's own (a clone never
 * copies a remote's), with the system config off.
 */
export class GitRepository {
  constructor(
    private readonly allowedProtocols: string[],
    private readonly egress: EgressGuard,
  ) {}

  /** The commit the branch points at now (`token`: for a private https repository). */
  async head(location: RepositoryLocation, token: string | null = null): Promise<string> {
    const remote = await this.remote(location.url);
    const { stdout } = await this.git(
      token,
      ['ls-remote', '--exit-code', '--', remote.url, `refs/heads/${location.branch}`],
      remote,
    );
    const commit = stdout.split(/\s/)[0];
    if (!/^[0-9a-f]{40,64}$/.test(commit))
      throw new RepositoryError(`branch "${location.branch}" not found`);
    return commit;
  }

  /**
   * The definition files at the branch's head, and that commit. The clone is bare: files are
   * read from git's objects (see readDefinitionTree), never from a checkout on this host.
   */
  async read(
    location: RepositoryLocation,
    token: string | null = null,
  ): Promise<{ commit: string; files: DefinitionFile[] }> {
    const remote = await this.remote(location.url);
    const dir = await mkdtemp(join(tmpdir(), 'ambient-factory-'));
    try {
      await this.git(
        token,
        [
          'clone',
          '--quiet',
          '--bare',
          '--depth',
          '1',
          '--single-branch',
          '--branch',
          location.branch,
          '--',
          remote.url,
          dir,
        ],
        remote,
      );
      const { stdout } = await this.git(null, ['-C', dir, 'rev-parse', 'HEAD']);
      const commit = stdout.trim();
      const inClone = (args: string[]) => this.git(null, ['-C', dir, ...args]);
      const files = await readDefinitionTree(inClone, commit, location.path, DEFINITION_ROOTS);
      return { commit, files };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  /** Where a command for `url` connects, checked by the egress policy just now. */
  private async remote(url: string): Promise<PinnedRemote> {
    try {
      return await pinnedRemote(url, protocolOf(url), this.egress);
    } catch (err) {
      if (err instanceof EgressRefusedError) throw new RepositoryError(err.message);
      throw err;
    }
  }

  /**
   * Runs git on this host, not in a sandbox: reading a factory's definition is Ambient's own step,
   * no tenant code runs, the remote is pinned through the egress guard (`pinnedRemote`), and only
   * the definition's files are read from the clone.
   */
  private async git(
    token: string | null,
    args: string[],
    remote?: PinnedRemote,
  ): Promise<{ stdout: string }> {
    const configs = (remote?.configs ?? []).flatMap((setting) => ['-c', setting]);
    try {
      return await run('git', [...configs, ...args], {
        timeout: GIT_TIMEOUT_MS,
        maxBuffer: 4 * 1024 * 1024,
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: process.env.HOME ?? tmpdir(),
          GIT_ALLOW_PROTOCOL: this.allowedProtocols.join(':'),
          GIT_CONFIG_NOSYSTEM: '1',
          ...gitEnv(token),
          ...remote?.env,
        },
      });
    } catch (err) {
      // git's own last word; `remote:` lines are what the server sent and are never repeated.
      const stderr = String((err as { stderr?: string }).stderr ?? '')
        .trim()
        .split('\n')
        .filter((line) => !/^remote:/i.test(line.trim()))
        .at(-1);
      throw new RepositoryError(
        `git ${args[0] === '-C' ? args[2] : args[0]} failed: ${stderr || (err as Error).message}`,
      );
    }
  }
}
