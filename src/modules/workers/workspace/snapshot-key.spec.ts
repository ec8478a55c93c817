import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bareRepo, pushFiles } from '../../../../test/support/git-repos';
import { repositoryCommits, snapshotKey, SnapshotKeyInput } from './snapshot-key';

describe('snapshotKey', () => {
  const base: SnapshotKeyInput = {
    teamId: 'team-1',
    environmentId: 'env-1',
    backend: 'bubblewrap',
    image: null,
    gitUrlBase: 'https://github.com',
    repos: [{ owner: 'acme', repo: 'web' }],
    commits: ['a'.repeat(40)],
    setupCommands: ['npm ci'],
    env: { B: '2', A: '1' },
  };

  it('is a stable hex digest that ignores the order of the setup variables', () => {
    expect(snapshotKey(base)).toMatch(/^[0-9a-f]{64}$/);
    expect(snapshotKey({ ...base, env: { A: '1', B: '2' } })).toBe(snapshotKey(base));
  });

  it('changes with every input a prepared workspace depends on', () => {
    const changes: Partial<SnapshotKeyInput>[] = [
      { teamId: 'team-2' },
      { environmentId: 'env-2' },
      { backend: 'docker' },
      { image: 'node:22' },
      { gitUrlBase: 'https://git.example.com' },
      { repos: [{ owner: 'acme', repo: 'api' }] },
      { commits: ['b'.repeat(40)] },
      { setupCommands: ['npm ci', 'npm run build'] },
      { setupCommands: [] },
      { env: { A: '1', B: 'rotated' } },
    ];
    const keys = new Set([
      snapshotKey(base),
      ...changes.map((c) => snapshotKey({ ...base, ...c })),
    ]);
    expect(keys.size).toBe(changes.length + 1);
  });
});

describe('repositoryCommits', () => {
  let gitRoot: string;
  beforeAll(() => {
    gitRoot = mkdtempSync(join(tmpdir(), 'ambient-key-git-'));
    bareRepo(gitRoot, 'acme', 'web', { 'README.md': 'hi\n' });
    bareRepo(gitRoot, 'acme', 'api', { 'README.md': 'api\n' });
  });
  afterAll(() => rmSync(gitRoot, { recursive: true, force: true }));

  const plan = (repos: { owner: string; repo: string }[]) => ({
    repos,
    gitUrlBase: gitRoot,
    gitToken: 'never-on-a-command-line',
    timeoutMs: 10_000,
  });

  it('resolves each HEAD without cloning, and follows a new commit', async () => {
    const repos = [
      { owner: 'acme', repo: 'web' },
      { owner: 'acme', repo: 'api' },
    ];
    const first = await repositoryCommits(plan(repos));
    expect(first).toEqual([expect.stringMatching(/^[0-9a-f]{40}$/), expect.any(String)]);
    expect(first![0]).not.toBe(first![1]);
    pushFiles(gitRoot, 'acme', 'web', { 'b.txt': 'b\n' });
    const second = await repositoryCommits(plan(repos));
    expect(second![0]).not.toBe(first![0]);
    expect(second![1]).toBe(first![1]);
  });

  it('has no commits (so no key) for a missing or unsafe repository', async () => {
    expect(await repositoryCommits(plan([{ owner: 'acme', repo: 'nope' }]))).toBeNull();
    expect(await repositoryCommits(plan([{ owner: '..', repo: 'web' }]))).toBeNull();
    expect(await repositoryCommits(plan([]))).toEqual([]);
  });
});
