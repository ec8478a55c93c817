import { skillName } from './run-item.mapper';

describe('skillName', () => {
  it.each([
    ['acme/web:.agents/skills/deploy/SKILL.md', 'deploy'],
    ['web:review', 'review'],
    ['acme/web:review', 'review'],
    ['review', 'review'],
  ])('%s -> %s', (spec, name) => {
    expect(skillName(spec)).toBe(name);
  });
});
