import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { ApiError } from '../../common/errors/api-error';
import { RUN_ID, withSpan } from '../../common/tracing';
import { newUuid } from '../../common/ids';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { RunCreationService, RunsService } from '../runs';
import { systemActor } from '../audit';
import { AmbientMetrics } from '../metrics';
import { CronSchedule, parseCronSchedule } from './cron-schedule';
import { planFiring } from './firing-plan';
import { FiringStatus, ScheduleFiring } from './schedule-firing.entity';
import { ScheduleFiringRepository } from './schedule-firing.repository';
import { Schedule } from './schedule.entity';
import { ScheduleRepository } from './schedule.repository';
import { SCHEDULER_CLOCK, SchedulerClock } from './scheduler-clock';

export const CLAIM_BATCH = 50;
const SWEEP_BATCH = 50;

/**
 * Turns due ticks into runs, exactly once per tick however many schedulers run:
 * 1. claim: in one transaction, lock due schedules (SKIP LOCKED, so replicas share the work),
 *    record a firing per tick with the run id chosen in advance, and advance `next_run_at`;
 * 2. spawn: holding the schedule's row lock, create the run with that id (or find it already
 *    created) and mark the firing spawned, or failed with the reason in `last_spawn_error`;
 * 3. sweep: a firing left pending by a scheduler that died between 1 and 2 is spawned by any
 *    other scheduler. The run's primary key makes a second run for one firing impossible.
 */
@Injectable()
export class ScheduleFirings {
  private readonly logger = new Logger('Scheduler');

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(SCHEDULER_CLOCK) private readonly clock: SchedulerClock,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly schedules: ScheduleRepository,
    private readonly firings: ScheduleFiringRepository,
    private readonly runCreation: RunCreationService,
    private readonly runs: RunsService,
    private readonly metrics: AmbientMetrics,
  ) {}

  /**
   * Step 1 for up to CLAIM_BATCH due schedules: the ids of the firings to spawn, and whether
   * the batch was full (more schedules may be due).
   */
  async claimDue(now: Date = this.clock.now()): Promise<{ firingIds: string[]; full: boolean }> {
    let skipped = 0;
    const claimed = await this.dataSource.transaction(async (manager) => {
      const locked = await this.schedules.lockDue(manager, now, CLAIM_BATCH);
      if (locked.length === 0) return { firingIds: [], full: false };
      const due = await this.schedules.findByIds(manager, locked);
      const firingIds: string[] = [];
      for (const schedule of due) {
        const firingId = await this.claimOne(manager, schedule, now);
        if (firingId) firingIds.push(firingId);
        else skipped += 1;
      }
      return { firingIds, full: locked.length === CLAIM_BATCH };
    });
    this.metrics.scheduleFiring('fired', claimed.firingIds.length);
    this.metrics.scheduleFiring('skipped', skipped);
    return claimed;
  }

  /** Records the tick the locked, due `schedule` fires now (or skips) and moves it on. */
  private async claimOne(
    manager: EntityManager,
    schedule: Schedule,
    now: Date,
  ): Promise<string | null> {
    let cron: CronSchedule;
    try {
      cron = parseCronSchedule(schedule.cronSchedule);
    } catch (err) {
      // Stored expressions were valid when written; never let one stop every schedule's ticks.
      const lastSpawnError = `cron_schedule: ${(err as Error).message}; fix it with PUT`;
      await this.schedules.update(manager, schedule.id, { nextRunAt: null, lastSpawnError });
      return null;
    }
    const dueAt = schedule.nextRunAt as Date;
    const windowMs = this.config.schedules.catchUpWindowSeconds * 1000;
    const plan = planFiring(cron, dueAt, now, windowMs);
    const firing: ScheduleFiring = {
      id: newUuid(),
      scheduleId: schedule.id,
      teamId: schedule.teamId,
      scheduledFor: plan.fireAt ?? dueAt,
      status: plan.fireAt ? 'pending' : 'skipped',
      runId: plan.fireAt ? newUuid() : null,
      scheduleName: schedule.name,
      cronSchedule: schedule.cronSchedule,
      missedTicks: plan.missedTicks,
      note: plan.note,
      claimedAt: now,
      finishedAt: plan.fireAt ? null : now,
    };
    await this.firings.insert(manager, firing);
    await this.schedules.update(manager, schedule.id, {
      nextRunAt: plan.nextRunAt,
      ...(plan.fireAt ? {} : { lastSpawnError: plan.note }),
    });
    if (!plan.fireAt) this.logger.warn(`schedule ${schedule.id} (${schedule.name}): ${plan.note}`);
    return plan.fireAt ? firing.id : null;
  }

  /** Step 2 for one firing; safe to call again and from several schedulers. */
  async spawn(firingId: string): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      const unlocked = await this.firings.find(manager, firingId);
      if (!unlocked || unlocked.status !== 'pending') return;
      // Schedule row first, then the firing: the order pause, update and delete lock in too.
      const schedule = await this.schedules.lock(manager, unlocked.scheduleId);
      const firing = await this.firings.lock(manager, firingId);
      if (!schedule || !firing || firing.status !== 'pending') return;
      if (!schedule.enabled) {
        await this.finish(manager, firing, 'cancelled', 'paused before its run was created');
        return;
      }
      const outcome = await this.createRun(schedule, firing);
      const now = this.clock.now();
      if (outcome.created) {
        await this.finish(manager, firing, 'spawned', firing.note);
        await this.schedules.update(manager, schedule.id, {
          lastRanAt: now,
          lastSpawnError: firing.note,
        });
      } else {
        const message = `tick ${firing.scheduledFor.toISOString()}: the run was not created: ${outcome.reason}`;
        await this.finish(manager, firing, 'failed', message);
        await this.schedules.update(manager, schedule.id, { lastSpawnError: message });
        this.logger.warn(`schedule ${schedule.id} (${schedule.name}): ${message}`);
      }
    });
  }

  /** Step 3: firings left pending longer than a scheduler needs to spawn them. */
  async spawnStale(now: Date = this.clock.now()): Promise<number> {
    const staleBefore = new Date(now.getTime() - this.staleAfterMs());
    const stale = await this.firings.pendingSince(staleBefore, SWEEP_BATCH);
    for (const firing of stale) await this.spawn(firing.id);
    if (stale.length) this.logger.warn(`finished ${stale.length} firing(s) a scheduler left`);
    return stale.length;
  }

  private staleAfterMs(): number {
    return Math.max(3000, 3 * this.config.schedules.tickIntervalMs);
  }

  /** Creates the firing's run with its pre-chosen id; a run already there counts as created. */
  private async createRun(
    schedule: Schedule,
    firing: ScheduleFiring,
  ): Promise<{ created: true } | { created: false; reason: string }> {
    const runId = firing.runId as string;
    if (await this.runs.findVisible(schedule.teamId, runId).catch(() => null)) {
      return { created: true };
    }
    try {
      // The root of the run's trace: the firing, then the job and its execution in a worker.
      const attributes = { 'ambient.schedule_id': schedule.id, [RUN_ID]: runId };
      await withSpan('schedule firing', { attributes }, () =>
        this.runCreation.create({
          runId,
          teamId: schedule.teamId,
          creatorId: schedule.createdBy,
          source: 'SCHEDULED_AGENT',
          prompt: schedule.prompt || undefined,
          title: schedule.name,
          config: schedule.agentConfig ?? undefined,
          metadata: schedule.metadata ?? undefined,
          mode: schedule.mode,
          agentIdentityUid: schedule.agentUid ?? undefined,
          auditBy: {
            teamId: schedule.teamId,
            actor: systemActor(`schedule:${schedule.id}`, `schedule "${schedule.name}"`),
          },
          scheduleInfo: {
            schedule_id: schedule.id,
            schedule_name: firing.scheduleName,
            cron_schedule: firing.cronSchedule,
          },
        }),
      );
      return { created: true };
    } catch (err) {
      if ((err as { code?: string }).code === 'ER_DUP_ENTRY') return { created: true };
      if (err instanceof ApiError) return { created: false, reason: err.message };
      throw err; // MySQL or Redis trouble: the firing stays pending and is retried
    }
  }

  private async finish(
    manager: EntityManager,
    firing: ScheduleFiring,
    status: FiringStatus,
    note: string | null,
  ): Promise<void> {
    await this.firings.finish(manager, firing.id, status, note, this.clock.now());
  }
}
