import { createHash } from 'node:crypto';
import { cloneUrl, isSafeRepoPart } from '../../environments';
import { gitHeadCommit } from '../../../common/git';
import type { SetupPlan } from './workspace-preparation';

/** Bumped when what a snapshot holds, or how it is made, changes: older ones stop matching. */
const SNAPSHOT_FORMAT = 1;

/** Everything a prepared workspace depends on; equal inputs give equal workspaces. */
export interface SnapshotKeyInput {
  teamId: string;
  environmentId: string;
  backend: string;
  /** The container image (docker); null for backends without one. */
  image: string | null;
  gitUrlBase: string;
  repos: { owner: string; repo: string }[];
  /** The commit each repository's HEAD points at, in `repos` order. */
  commits: string[];
  setupCommands: string[];
  /** The variables setup commands get (the run's secrets): a rotated secret sets up anew. */
  env: Record<string, string>;
}

/** The snapshot key: a SHA-256 over the inputs, hex. */
export function snapshotKey(input: SnapshotKeyInput): string {
  const material = JSON.stringify([
    SNAPSHOT_FORMAT,
    input.teamId,
    input.environmentId,
    input.backend,
    input.image,
    input.gitUrlBase,
    input.repos.map(({ owner, repo }, i) => [owner, repo, input.commits[i]]),
    input.setupCommands,
    Object.entries(input.env).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  ]);
  return createHash('sha256').update(material).digest('hex');
}

/**
 * The commit of each of the plan's repositories (one `git ls-remote` each, at once); null when
 * any cannot be told — then there is no key, and setup runs (and reports the clone's failure).
 */
export async function repositoryCommits(
  plan: Pick<SetupPlan, 'repos' | 'gitUrlBase' | 'gitToken' | 'timeoutMs'>,
  signal?: AbortSignal,
): Promise<string[] | null> {
  if (plan.repos.some(({ owner, repo }) => !isSafeRepoPart(owner) || !isSafeRepoPart(repo))) {
    return null;
  }
  const commits = await Promise.all(
    plan.repos.map(({ owner, repo }) =>
      gitHeadCommit({
        url: cloneUrl(plan.gitUrlBase, owner, repo),
        token: plan.gitToken,
        timeoutMs: plan.timeoutMs,
        signal,
      }),
    ),
  );
  return commits.every((c): c is string => c !== null) ? commits : null;
}
