import type { EntityManager } from 'typeorm';
import type { Invalidation, InvalidationBus } from '../../common/cache/broadcast-cache';
import {
  FOLLOWUP_RECHECK_MS,
  FollowupAnnouncements,
  MAX_ANNOUNCED_RUNS,
  RUN_FOLLOWUP_TOPIC,
} from './followup-announcements';

/**
 * A live execution reads the database for follow-ups only when its run was announced since its
 * last read, or when announcements may have been missed; never skipping a read it needs is what
 * keeps a follow-up from waiting for the execution's end.
 */
describe('FollowupAnnouncements', () => {
  function board(live = true) {
    const listeners: ((change: Invalidation | null) => void)[] = [];
    const bus = {
      live,
      cacheTtlMs: 0,
      listen: (listener: (change: Invalidation | null) => void) => listeners.push(listener),
      changed: jest.fn(async () => undefined),
    } satisfies InvalidationBus;
    const announce = (change: Invalidation | null) => listeners.forEach((l) => l(change));
    const heard = (runId: string) => announce({ topic: RUN_FOLLOWUP_TOPIC, id: runId });
    return { announcements: new FollowupAnnouncements(bus), bus, announce, heard };
  }

  it('reads at the first look, then only after its run was announced', () => {
    const { announcements, heard } = board();
    const look = announcements.watch('run-1');
    expect(look()).toBe(true);
    expect(look()).toBe(false);
    heard('run-2');
    expect(look()).toBe(false);
    heard('run-1');
    expect(look()).toBe(true);
    expect(look()).toBe(false);
  });

  it('reads again after an announcement that came after its last read, for every execution of the run', () => {
    const { announcements, heard } = board();
    const first = announcements.watch('run-1');
    const second = announcements.watch('run-1');
    first();
    second();
    heard('run-1');
    heard('run-1');
    expect(first()).toBe(true);
    // One execution's read does not use up another's announcement.
    expect(second()).toBe(true);
    expect(first()).toBe(false);
  });

  it('reads at every look while announcements may be missed', () => {
    const { announcements, announce, bus } = board(false);
    const look = announcements.watch('run-1');
    expect(look()).toBe(true);
    expect(look()).toBe(true);
    (bus as { live: boolean }).live = true;
    announce(null); // what Invalidations says once it is subscribed again
    expect(look()).toBe(true);
    expect(look()).toBe(false);
  });

  it('reads once more after the channel dropped', () => {
    const { announcements, announce } = board();
    const look = announcements.watch('run-1');
    look();
    announce(null);
    expect(look()).toBe(true);
    expect(look()).toBe(false);
  });

  it('reads once more when the memory of announced runs overflows, and keeps no more than its bound', () => {
    const { announcements, heard } = board();
    const look = announcements.watch('run-1');
    look();
    for (let i = 0; i < MAX_ANNOUNCED_RUNS; i++) heard(`other-${i}`);
    expect(look()).toBe(false);
    heard('one-too-many');
    expect(look()).toBe(true);
    expect((announcements as unknown as { heard: Map<string, number> }).heard.size).toBe(1);
  });

  it('reads at least every FOLLOWUP_RECHECK_MS, for an announcement lost with the channel up', () => {
    jest.useFakeTimers();
    try {
      const { announcements } = board();
      const look = announcements.watch('run-1');
      look();
      jest.advanceTimersByTime(FOLLOWUP_RECHECK_MS - 1);
      expect(look()).toBe(false);
      jest.advanceTimersByTime(1);
      expect(look()).toBe(true);
      expect(look()).toBe(false);
    } finally {
      jest.useRealTimers();
    }
  });

  it('ignores other topics', () => {
    const { announcements, announce } = board();
    const look = announcements.watch('run-1');
    look();
    announce({ topic: 'api_key', id: 'run-1' });
    expect(look()).toBe(false);
  });

  it('reads at every look without a channel at all', () => {
    const announcements = new FollowupAnnouncements(undefined);
    const look = announcements.watch('run-1');
    expect([look(), look()]).toEqual([true, true]);
  });

  it("announces a stored follow-up on the run's id, through the caller's transaction", async () => {
    const { announcements, bus } = board();
    const manager = {} as EntityManager;
    await announcements.stored(manager, 'run-1');
    expect(bus.changed).toHaveBeenCalledWith(manager, RUN_FOLLOWUP_TOPIC, ['run-1']);
  });
});
