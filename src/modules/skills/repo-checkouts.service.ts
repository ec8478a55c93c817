import { Inject, Injectable } from '@nestjs/common';
import { existsSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { newUid } from '../../common/ids';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { cloneUrl, isSafeRepoPart } from '../environments';
import { gitClone } from '../../common/git';
import { TeamSecretsService } from '../secrets';

const CLONE_TIMEOUT_MS = 120_000;

/**
 * Shallow checkouts of environment repositories for skill discovery, reused for the cache TTL.
 * Per team, because a private repository is read with the team's own token.
 */
@Injectable()
export class RepoCheckouts {
  private readonly root: string;
  private readonly fetchedAt = new Map<string, number>();
  private readonly inFlight = new Map<string, Promise<string>>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly secrets: TeamSecretsService,
  ) {
    this.root = join(resolve(config.runs.workspaceRoot), '.skill-cache');
  }

  /** Drops every cached checkout of the team (GET /agent?refresh=true). */
  clear(teamId: string): void {
    for (const key of this.fetchedAt.keys()) {
      if (key.startsWith(`${teamId}/`)) this.fetchedAt.delete(key);
    }
  }

  /** The checkout's directory; throws with git's last output line when the clone fails. */
  async checkout(teamId: string, owner: string, repo: string): Promise<string> {
    // The names become directories here and the clone URL: `..` must never leave the cache.
    if (!isSafeRepoPart(owner) || !isSafeRepoPart(repo)) {
      throw new Error(`cannot clone ${owner}/${repo}: invalid repository name`);
    }
    const key = `${teamId}/${owner}/${repo}`;
    const dir = join(this.root, teamId, owner, repo);
    const fetched = this.fetchedAt.get(key);
    if (
      fetched !== undefined &&
      Date.now() - fetched < this.config.skills.cacheTtlSeconds * 1000 &&
      existsSync(dir)
    ) {
      return dir;
    }
    const pending = this.inFlight.get(key) ?? this.clone(teamId, owner, repo, dir);
    this.inFlight.set(key, pending);
    try {
      const result = await pending;
      this.fetchedAt.set(key, Date.now());
      return result;
    } finally {
      this.inFlight.delete(key);
    }
  }

  private async clone(teamId: string, owner: string, repo: string, dir: string): Promise<string> {
    const staging = `${dir}.${newUid(8)}`;
    await mkdir(join(this.root, teamId, owner), { recursive: true });
    const url = cloneUrl(this.config.environments.gitUrlBase, owner, repo);
    const result = await gitClone({
      url,
      dest: staging,
      cwd: this.root,
      token: await this.secrets.gitToken(teamId),
      timeoutMs: CLONE_TIMEOUT_MS,
      configs: ['core.symlinks=false'],
      cloneArgs: ['--depth', '1'],
    });
    if (result.exitCode !== 0) {
      await rm(staging, { recursive: true, force: true });
      const last = result.output.trim().split('\n').at(-1) ?? '';
      throw new Error(`cannot clone ${owner}/${repo}: ${last || `exit code ${result.exitCode}`}`);
    }
    await rm(dir, { recursive: true, force: true });
    await rename(staging, dir);
    return dir;
  }
}
