import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { ApiError } from '../../common/errors/api-error';
import { newUuid } from '../../common/ids';
import { AuditLog } from '../audit';
import type { Principal } from '../../common/auth/principal';
import { EnvironmentsService } from '../environments';
import { TeamsService } from '../teams';
import type { CreateScheduleDto, UpdateScheduleDto } from './dto/schedule-request.dto';
import type { ScheduledAgentItemDto } from './dto/scheduled-agent-item.dto';
import { toScheduledAgentItem } from './schedule-item.mapper';
import { Schedule } from './schedule.entity';
import { ScheduleRepository } from './schedule.repository';
import { SCHEDULER_CLOCK, SchedulerClock } from './scheduler-clock';
import { ScheduleInput, ScheduleValidator } from './schedule-validator';
import { parseCronSchedule } from './cron-schedule';

/**
 * Scheduled agents of a team. Every change locks the schedule's row, so it waits for a tick
 * being turned into a run at that moment: once pause or delete has answered, no further run
 * starts.
 */
@Injectable()
export class SchedulesService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly schedules: ScheduleRepository,
    @Inject(SCHEDULER_CLOCK) private readonly clock: SchedulerClock,
    private readonly validator: ScheduleValidator,
    private readonly teams: TeamsService,
    private readonly environments: EnvironmentsService,
    private readonly audit: AuditLog,
  ) {}

  async list(teamId: string): Promise<ScheduledAgentItemDto[]> {
    return this.toItems(teamId, await this.schedules.list(teamId));
  }

  async get(teamId: string, id: string): Promise<ScheduledAgentItemDto> {
    const schedule = await this.schedules.findOfTeam(id, teamId);
    if (!schedule) throw notFound(id);
    return this.item(schedule);
  }

  async create(principal: Principal, body: CreateScheduleDto): Promise<ScheduledAgentItemDto> {
    this.validator.assertPresent(body as ScheduleInput, ['name', 'cron_schedule']);
    const spec = await this.audit.deniedOn(principal, 'schedule.create', null, () =>
      this.validator.check(principal.teamId, body as ScheduleInput),
    );
    const now = this.clock.now();
    const enabled = body.enabled ?? true;
    const schedule: Schedule = {
      id: newUuid(),
      teamId: principal.teamId,
      name: spec.name,
      cronSchedule: spec.cron.expression,
      enabled,
      prompt: spec.prompt,
      agentConfig: spec.agentConfig,
      agentUid: spec.agentUid,
      metadata: spec.metadata,
      mode: spec.mode,
      createdBy: principal.userId,
      updatedBy: principal.userId,
      nextRunAt: enabled ? spec.cron.nextAfter(now) : null,
      lastRanAt: null,
      lastSpawnError: null,
      createdAt: now,
      updatedAt: now,
    };
    await this.dataSource.transaction(async (manager) => {
      await this.schedules.insert(manager, schedule);
      await this.audit.record(manager, principal, 'schedule.create', target(schedule.id), {
        name: schedule.name,
        cron_schedule: schedule.cronSchedule,
        enabled,
      });
    });
    return this.item(schedule);
  }

  /** Replaces the schedule: the next tick is recomputed when the cron or `enabled` changes. */
  async update(
    principal: Principal,
    id: string,
    body: UpdateScheduleDto,
  ): Promise<ScheduledAgentItemDto> {
    const input = body as ScheduleInput;
    this.validator.assertPresent(input, ['name', 'cron_schedule', 'enabled']);
    const check = (current: Schedule) =>
      this.audit.deniedOn(principal, 'schedule.update', target(id), () =>
        this.validator.check(principal.teamId, input, current),
      );
    const schedule = await this.change(principal, id, 'schedule.update', async (current, now) => {
      const spec = await check(current);
      const enabled = body.enabled as boolean;
      const keepTick = enabled && current.enabled && spec.cron.expression === current.cronSchedule;
      return {
        name: spec.name,
        cronSchedule: spec.cron.expression,
        enabled,
        prompt: spec.prompt,
        agentConfig: spec.agentConfig,
        agentUid: spec.agentUid,
        metadata: spec.metadata,
        mode: spec.mode,
        nextRunAt: keepTick ? current.nextRunAt : enabled ? spec.cron.nextAfter(now) : null,
      };
    });
    return this.item(schedule);
  }

  async pause(principal: Principal, id: string): Promise<ScheduledAgentItemDto> {
    const schedule = await this.change(principal, id, 'schedule.pause', async (current) =>
      current.enabled ? { enabled: false, nextRunAt: null } : {},
    );
    return this.item(schedule);
  }

  /** Resumes at the next tick from now: ticks that passed while paused never fire. */
  async resume(principal: Principal, id: string): Promise<ScheduledAgentItemDto> {
    const schedule = await this.change(principal, id, 'schedule.resume', async (current, now) =>
      current.enabled
        ? {}
        : { enabled: true, nextRunAt: parseCronSchedule(current.cronSchedule).nextAfter(now) },
    );
    return this.item(schedule);
  }

  async delete(principal: Principal, id: string): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      const schedule = await this.lock(manager, principal.teamId, id);
      await this.schedules.delete(manager, id);
      await this.audit.record(manager, principal, 'schedule.delete', target(id), {
        name: schedule.name,
      });
    });
  }

  /** Applies `changes` to the locked row, stamping who changed it and when, with its audit event. */
  private async change(
    principal: Principal,
    id: string,
    action: string,
    changes: (current: Schedule, now: Date) => Promise<Partial<Schedule>>,
  ): Promise<Schedule> {
    return this.dataSource.transaction(async (manager) => {
      const current = await this.lock(manager, principal.teamId, id);
      const now = this.clock.now();
      const patch = await changes(current, now);
      if (Object.keys(patch).length === 0) return current;
      const next: Schedule = { ...current, ...patch, updatedAt: now, updatedBy: principal.userId };
      await this.schedules.update(manager, id, {
        ...patch,
        updatedAt: now,
        updatedBy: principal.userId,
      });
      await this.audit.record(manager, principal, action, target(id), {
        changed: Object.keys(patch).sort(),
      });
      return next;
    });
  }

  private async lock(manager: EntityManager, teamId: string, id: string): Promise<Schedule> {
    const schedule = await this.schedules.lockOfTeam(manager, teamId, id);
    if (!schedule) throw notFound(id);
    return schedule;
  }

  private async item(schedule: Schedule): Promise<ScheduledAgentItemDto> {
    return (await this.toItems(schedule.teamId, [schedule]))[0];
  }

  private async toItems(teamId: string, schedules: Schedule[]): Promise<ScheduledAgentItemDto[]> {
    const userIds = schedules.flatMap((s) => [s.createdBy, s.updatedBy]).filter((u) => u !== null);
    const [users, environments] = await Promise.all([
      this.teams.usersByIds(teamId, userIds),
      this.environments.visibleByIds(
        teamId,
        schedules.flatMap((s) => s.agentConfig?.environment_id ?? []),
      ),
    ]);
    return schedules.map((s) => toScheduledAgentItem(s, users, environments));
  }
}

function target(id: string) {
  return { type: 'schedule', id };
}

function notFound(id: string): ApiError {
  return ApiError.notFound(`schedule "${id}"`);
}
