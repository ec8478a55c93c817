import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { discoverSkills } from './skill-discovery';

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
    expect(found.error).toContain('outside the repository');
    rmSync(outside, { recursive: true, force: true });
  });
});
