import { runTimeMs, skillName } from './run-item.mapper';

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

describe('runTimeMs', () => {
  const now = new Date('2026-01-01T12:00:10.000Z');

  it('is the ended executions’ total, plus the running one until now', () => {
    expect(runTimeMs({ runTimeMs: 4200, executionStartedAt: null }, now)).toBe(4200);
    expect(
      runTimeMs({ runTimeMs: 4200, executionStartedAt: new Date('2026-01-01T12:00:07.500Z') }, now),
    ).toBe(6700);
  });

  it('never counts a clock ahead of now', () => {
    expect(
      runTimeMs({ runTimeMs: 100, executionStartedAt: new Date('2026-01-01T12:00:11.000Z') }, now),
    ).toBe(100);
  });
});
