import { parseSkillFile, substituteArguments } from './skill-file';
import { parseSkillSpec } from './skill-spec';

describe('parseSkillFile', () => {
  it('reads name, description and body, keeping only string values', () => {
    const text =
      '---\r\nname: deploy\r\ndescription: Ships it.\r\ntags: [a]\r\n---\r\n# Deploy\r\nRun make.\r\n';
    expect(parseSkillFile(text, 'dir')).toEqual({
      name: 'deploy',
      description: 'Ships it.',
      body: '# Deploy\nRun make.',
    });
  });

  it('falls back to the directory name and the first non-heading paragraph', () => {
    const parsed = parseSkillFile('# Title\n\nFirst  paragraph\nhere.\n\nMore.', 'review-pr');
    expect(parsed.name).toBe('review-pr');
    expect(parsed.description).toBe('First paragraph here.');
  });

  it('cuts long descriptions at a sentence end and rejects broken front matter', () => {
    const long = `${'Word. '.repeat(120)}`;
    const parsed = parseSkillFile(`---\ndescription: ${long}\n---\nbody`, 'x');
    expect(parsed.description.length).toBeLessThanOrEqual(512);
    expect(parsed.description.endsWith('.')).toBe(true);
    expect(() => parseSkillFile('---\nname: [unclosed\n---\nbody', 'x')).toThrow(/YAML/);
    expect(() => parseSkillFile('---\n---\n', 'x')).toThrow(/neither/);
  });
});

describe('substituteArguments', () => {
  it('replaces $ARGUMENTS, $ARGUMENTS[N] and $N, leaving missing positions literal', () => {
    expect(substituteArguments('All: $ARGUMENTS; first $0, second $ARGUMENTS[1], $5', 'a b')).toBe(
      'All: a b; first a, second b, $5',
    );
    expect(substituteArguments('no placeholders', 'a')).toBeNull();
  });
});

describe('parseSkillSpec', () => {
  it('parses every documented form', () => {
    expect(parseSkillSpec('deploy')).toEqual({
      owner: null,
      repo: null,
      identifier: 'deploy',
      isPath: false,
    });
    expect(parseSkillSpec('web:deploy')).toMatchObject({ repo: 'web', identifier: 'deploy' });
    expect(parseSkillSpec('acme/web:.claude/skills/x/SKILL.md')).toEqual({
      owner: 'acme',
      repo: 'web',
      identifier: '.claude/skills/x/SKILL.md',
      isPath: true,
    });
  });

  it('rejects absolute paths, escapes and empty parts', () => {
    expect(parseSkillSpec('acme/web:/etc/passwd')).toBe('must not be an absolute path');
    expect(parseSkillSpec('web:../x/SKILL.md')).toBe('must not leave the repository');
    expect(parseSkillSpec(':x')).toBe('has an empty repository qualifier');
    expect(parseSkillSpec('web:')).toBe('names no skill');
  });
});
