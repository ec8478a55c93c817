import { WarmPoolSizing } from './warm-pool-sizing';

const IMAGE = 'ambient-agent:bookworm';

describe('WarmPoolSizing', () => {
  it('keeps the configured size of the default image and none of other images when idle', () => {
    const sizing = new WarmPoolSizing({ size: 2, max: 8 }, IMAGE);
    expect(sizing.target(IMAGE, 0)).toBe(2);
    expect(sizing.target('python:3.12', 0)).toBe(0);
    expect(sizing.images(0)).toEqual([IMAGE]);
  });

  it('is disabled by size 0: no target even under demand', () => {
    const sizing = new WarmPoolSizing({ size: 0, max: 8 }, IMAGE);
    for (let i = 0; i < 5; i++) sizing.recordDemand(IMAGE, i);
    expect(sizing.enabled).toBe(false);
    expect(sizing.target(IMAGE, 10)).toBe(0);
  });

  it('grows to the largest recent burst, capped at max', () => {
    const sizing = new WarmPoolSizing({ size: 2, max: 8, burstWindowMs: 1000 }, IMAGE);
    for (let i = 0; i < 5; i++) sizing.recordDemand(IMAGE, 100 + i);
    expect(sizing.target(IMAGE, 200)).toBe(5);
    for (let i = 0; i < 20; i++) sizing.recordDemand(IMAGE, 300 + i);
    expect(sizing.target(IMAGE, 400)).toBe(8);
  });

  it('does not count runs spread over time as one burst', () => {
    const sizing = new WarmPoolSizing({ size: 1, max: 8, burstWindowMs: 1000 }, IMAGE);
    for (let i = 0; i < 6; i++) sizing.recordDemand(IMAGE, i * 5000);
    expect(sizing.target(IMAGE, 30_000)).toBe(1);
  });

  it('gives another image a pool while it is in demand, and forgets it after the history', () => {
    const sizing = new WarmPoolSizing(
      { size: 2, max: 8, burstWindowMs: 1000, historyMs: 60_000 },
      IMAGE,
    );
    sizing.recordDemand('node:22', 0);
    sizing.recordDemand('node:22', 10);
    sizing.recordDemand('node:22', 20);
    expect(sizing.images(100).sort()).toEqual([IMAGE, 'node:22'].sort());
    expect(sizing.target('node:22', 100)).toBe(3);
    expect(sizing.target('node:22', 60_021)).toBe(0);
    expect(sizing.images(60_021)).toEqual([IMAGE]);
  });

  it('never goes below the configured size, even when max is smaller', () => {
    const sizing = new WarmPoolSizing({ size: 4, max: 2 }, IMAGE);
    expect(sizing.target(IMAGE, 0)).toBe(4);
    for (let i = 0; i < 10; i++) sizing.recordDemand(IMAGE, i);
    expect(sizing.target(IMAGE, 10)).toBe(4);
  });
});
