import { Inject, Injectable, Optional } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { InvalidationBus } from '../../common/cache/broadcast-cache';
import { Invalidations } from '../../common/cache/invalidations';

/** What a stored follow-up announces to every replica (`Invalidations`): its run's id. */
export const RUN_FOLLOWUP_TOPIC = 'run_followup';

/** Runs remembered as announced; past this the memory starts again and every watch looks once. */
export const MAX_ANNOUNCED_RUNS = 10_000;

/**
 * A watch reads at least this often whatever it heard: an announcement can be lost without the
 * channel dropping (its PUBLISH failed, or the announcing process died right after the commit).
 */
export const FOLLOWUP_RECHECK_MS = 10_000;

/**
 * Whether the database may hold a follow-up this watch's execution has not taken: true at its
 * first call, then only when its run was announced since the last call, or announcements may
 * have been missed meanwhile (see FollowupAnnouncements).
 */
export type FollowupWatch = () => boolean;

/**
 * Spares a live execution a database read for follow-ups at every model turn (most turns find
 * none). A stored follow-up is announced to every replica once it has committed; an execution
 * reads only when its run was announced since its last read, or when announcements may have
 * been missed: the channel is not live, dropped since (Invalidations says so with `null`), or
 * the memory of announced runs was emptied; and at least every FOLLOWUP_RECHECK_MS, for an
 * announcement lost with the channel up. An announcement that reaches this replica only
 * after a turn's check (the API answers once every replica acknowledged it, unless
 * acknowledgements are off) is seen at the next turn, or, after the execution's last turn, by
 * the read at its end that re-queues the run (ExecutionOutcome.requeueForFollowups), which
 * always reads: a follow-up is delivered late at worst, never lost.
 */
@Injectable()
export class FollowupAnnouncements {
  /** Run id → how many announcements were heard for it. */
  private readonly heard = new Map<string, number>();
  /** Bumped whenever announcements may have been missed: every watch reads once more. */
  private generation = 0;

  constructor(@Optional() @Inject(Invalidations) private readonly bus?: InvalidationBus) {
    bus?.listen((change) => {
      if (change === null) return this.forget();
      if (change.topic !== RUN_FOLLOWUP_TOPIC) return;
      if (this.heard.size >= MAX_ANNOUNCED_RUNS && !this.heard.has(change.id)) this.forget();
      this.heard.set(change.id, (this.heard.get(change.id) ?? 0) + 1);
    });
  }

  /** Announces a follow-up stored for `runId` once `manager`'s transaction has committed. */
  async stored(manager: EntityManager, runId: string): Promise<void> {
    await this.bus?.changed(manager, RUN_FOLLOWUP_TOPIC, [runId]);
  }

  /** A watch for one execution of `runId`. */
  watch(runId: string): FollowupWatch {
    let seen: { generation: number; heard: number } | null = null;
    let lookedAt = 0;
    return () => {
      const now = { generation: this.generation, heard: this.heard.get(runId) ?? 0 };
      const look =
        !this.bus?.live ||
        seen === null ||
        seen.generation !== now.generation ||
        seen.heard !== now.heard ||
        Date.now() - lookedAt >= FOLLOWUP_RECHECK_MS;
      seen = now;
      if (look) lookedAt = Date.now();
      return look;
    };
  }

  private forget(): void {
    this.heard.clear();
    this.generation++;
  }
}
