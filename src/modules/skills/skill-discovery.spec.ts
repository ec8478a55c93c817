import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  chooseByPrefix,
  discoverSkills,
  FoundSkill,
  readSkill,
  skillPrefix,
} from './skill-discovery';

describe('discoverSkills', () => {
  let repo: string;
  beforeEach(() => (repo = mkdtempSync(join(tmpdir(), 'skills-'))));
  afterEach(() => rmSync(repo, { recursive: true, force: true }));

  const write = (path: string, text: string) => {
    mkdirSync(join(repo, path, '..'), { recursive: true });
    writeFileSync(join(repo, path), text);
  };

  it('finds <provider>/<name>/SKILL.md one level deep, in precedence order', async () => {
    write('.claude/skills/b/SKILL.md', 'Claude b.');
    write('.agents/skills/a/SKILL.md', 'Agents a.');
    write('.agents/skills/nested/deeper/SKILL.md', 'too deep');
    write('.agents/skills/no-file/README.md', 'not a skill');
    const found = await discoverSkills(repo);
    expect(found.map((f) => f.path)).toEqual([
      '.agents/skills/a/SKILL.md',
      '.claude/skills/b/SKILL.md',
    ]);
    expect(found[0].skill).toMatchObject({ name: 'a', description: 'Agents a.' });
  });

  it('refuses a SKILL.md that links outside the repository', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'secret-'));
    writeFileSync(join(outside, 'secret'), 'TOP SECRET');
    mkdirSync(join(repo, '.agents/skills/leak'), { recursive: true });
    symlinkSync(join(outside, 'secret'), join(repo, '.agents/skills/leak/SKILL.md'));
    const [found] = await discoverSkills(repo);
    expect(found.skill).toBeNull();
    expect(found.error).toBe('.agents/skills/leak/SKILL.md is a symbolic link');
    rmSync(outside, { recursive: true, force: true });
  });

  it('finds nothing through a provider directory that links outside the repository', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'secret-'));
    mkdirSync(join(outside, 'skills/leak'), { recursive: true });
    writeFileSync(join(outside, 'skills/leak/SKILL.md'), 'TOP SECRET');
    symlinkSync(outside, join(repo, '.agents'));
    mkdirSync(join(repo, '.claude/skills'), { recursive: true });
    symlinkSync(join(outside, 'skills/leak'), join(repo, '.claude/skills/leak'));
    expect(await discoverSkills(repo)).toEqual([]);
    const read = await readSkill(repo, '.agents/skills/leak/SKILL.md');
    expect(read).toEqual({
      path: '.agents/skills/leak/SKILL.md',
      skill: null,
      error: '.agents/skills/leak/SKILL.md resolves outside the repository',
    });
    rmSync(outside, { recursive: true, force: true });
  });

  it('finds skills below any directory of a monorepo, shallower prefixes first', async () => {
    write('.agents/skills/root/SKILL.md', 'At the root.');
    write('packages/web/.agents/skills/lint/SKILL.md', 'Lint the web app.');
    write('packages/web/src/.claude/skills/deep/SKILL.md', 'Deeper.');
    write('apps/.warp/skills/ship/SKILL.md', 'Ship apps.');
    const found = await discoverSkills(repo);
    expect(found.map((f) => f.path)).toEqual([
      '.agents/skills/root/SKILL.md',
      'apps/.warp/skills/ship/SKILL.md',
      'packages/web/.agents/skills/lint/SKILL.md',
      'packages/web/src/.claude/skills/deep/SKILL.md',
    ]);
    expect(found[2].skill).toMatchObject({ name: 'lint', description: 'Lint the web app.' });
  });

  it.each([
    'node_modules/pkg',
    'vendor/lib',
    'third_party/x',
    'dist',
    '.git/modules',
    '.venv/lib',
    'packages/web/node_modules/dep',
  ])('skips %s (vendored, build output or hidden)', async (dir) => {
    write(`${dir}/.agents/skills/foreign/SKILL.md`, 'Not ours.');
    write('.agents/skills/ours/SKILL.md', 'Ours.');
    expect((await discoverSkills(repo)).map((f) => f.path)).toEqual([
      '.agents/skills/ours/SKILL.md',
    ]);
  });

  it('reports the same directory with the same content under several providers once, for the first provider', async () => {
    write('.claude/skills/review/SKILL.md', 'Review it.');
    write('.agents/skills/review/SKILL.md', 'Review it.');
    write('.codex/skills/review/SKILL.md', 'Review it differently.');
    write('pkg/.warp/skills/review/SKILL.md', 'Review it.');
    write('pkg/.github/skills/review/SKILL.md', 'Review it.');
    expect((await discoverSkills(repo)).map((f) => f.path)).toEqual([
      '.agents/skills/review/SKILL.md',
      '.codex/skills/review/SKILL.md',
      'pkg/.warp/skills/review/SKILL.md',
    ]);
  });

  it('stops at the depth and directory bounds', async () => {
    write('a/b/c/.agents/skills/deep/SKILL.md', 'Three below.');
    write('x/.agents/skills/shallow/SKILL.md', 'One below.');
    const byDepth = await discoverSkills(repo, { maxPrefixDepth: 2, maxDirectories: 1000 });
    expect(byDepth.map((f) => f.path)).toEqual(['x/.agents/skills/shallow/SKILL.md']);
    for (let i = 0; i < 20; i++) mkdirSync(join(repo, `dir${String(i).padStart(2, '0')}`));
    // x sorts after the twenty empty directories: a budget of five is spent before it is read.
    const byCount = await discoverSkills(repo, { maxPrefixDepth: 6, maxDirectories: 5 });
    expect(byCount).toEqual([]);
    const enough = await discoverSkills(repo, { maxPrefixDepth: 6, maxDirectories: 100 });
    expect(enough.map((f) => f.path)).toEqual([
      'x/.agents/skills/shallow/SKILL.md',
      'a/b/c/.agents/skills/deep/SKILL.md',
    ]);
  });
});

describe('chooseByPrefix', () => {
  const skill = (path: string): FoundSkill => ({
    path,
    skill: { name: 'lint', description: '', body: '' },
    error: null,
  });

  it('names the prefix of a skill path', () => {
    expect(skillPrefix('.agents/skills/lint/SKILL.md')).toBe('');
    expect(skillPrefix('packages/web/.claude/skills/lint/SKILL.md')).toBe('packages/web');
  });

  it('prefers the shallowest prefix, then the first provider there', () => {
    const chosen = chooseByPrefix([
      skill('packages/web/.agents/skills/lint/SKILL.md'),
      skill('tools/.agents/skills/lint/SKILL.md'),
      skill('tools/.claude/skills/lint/SKILL.md'),
    ]);
    expect(chosen).toEqual(skill('tools/.agents/skills/lint/SKILL.md'));
  });

  it('calls two prefixes equally deep ambiguous', () => {
    expect(
      chooseByPrefix([
        skill('packages/a/.agents/skills/lint/SKILL.md'),
        skill('packages/b/.agents/skills/lint/SKILL.md'),
      ]),
    ).toEqual({
      ambiguous: [
        'packages/a/.agents/skills/lint/SKILL.md',
        'packages/b/.agents/skills/lint/SKILL.md',
      ],
    });
  });
});
