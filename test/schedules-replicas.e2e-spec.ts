import { ConsoleLogger } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { AppModule } from '../src/app.module';
import { RunCreationService } from '../src/modules/runs/run-creation.service';
import { ScheduleFirings } from '../src/modules/schedules/schedule-firings.service';
import {
  SCHEDULER_CLOCK,
  SchedulerClock,
  systemClock,
} from '../src/modules/schedules/scheduler-clock';
import { SchedulerLoop } from '../src/modules/schedules/scheduler-loop.service';
import { useTestApp } from './support/use-test-app';
import { waitFor } from './support/wait';

interface FiringRow {
  schedule_id: string;
  scheduled_for: Date;
  status: string;
  run_id: string | null;
  missed_ticks: number;
  note: string | null;
}

/** A clock the test moves by hand: ticks "missed while every scheduler was down" in no time. */
class ManualClock implements SchedulerClock {
  constructor(private current: Date) {}
  now(): Date {
    return new Date(this.current);
  }
  set(date: Date): void {
    this.current = date;
  }
}

describe('schedules with several scheduler replicas, restarts and crashes', () => {
  // The API app (no worker: runs stay QUEUED, which is all these tests look at).
  const { env, app, api } = useTestApp('schedule_replicas', ['api'], {}, { model: false });

  /**
   * A scheduler-only Ambient (the same AppModule as `AMBIENT_ROLES=scheduler`) on this file's
   * database and Redis, reading time from `clock`.
   */
  const startScheduler = async (
    clock: SchedulerClock = systemClock,
    tickIntervalMs = 3_600_000,
  ) => {
    const config = env.config(['scheduler'], {
      'schedules.tickIntervalMs': tickIntervalMs,
      'schedules.catchUpWindowSeconds': 300,
    });
    const moduleRef: TestingModule = await Test.createTestingModule({
      imports: [AppModule.forConfig(config)],
    })
      .overrideProvider(SCHEDULER_CLOCK)
      .useValue(clock)
      .setLogger(new ConsoleLogger({ logLevels: ['error'] }))
      .compile();
    await moduleRef.init();
    return moduleRef;
  };

  const runsOf = async (scheduleId: string): Promise<{ run_id: string; schedule: unknown }[]> =>
    (await api.get(`/agent/runs?schedule_id=${scheduleId}&limit=500`)).body.runs;
  const firingsOf = async (scheduleId: string): Promise<FiringRow[]> =>
    app.dataSource.query(
      `SELECT schedule_id, scheduled_for, status, run_id, missed_ticks, note
         FROM schedule_firings WHERE schedule_id = ? ORDER BY scheduled_for`,
      [scheduleId],
    );
  const hourly = async (name: string) => {
    const res = await api.post('/agent/schedules', {
      name,
      cron_schedule: '0 * * * *',
      prompt: name,
    });
    expect(res.status).toBe(201);
    return { id: res.body.id as string, nextRun: new Date(res.body.history.next_run) };
  };
  const item = async (id: string) => (await api.get(`/agent/schedules/${id}`)).body;

  it('fires every tick exactly once with three scheduler replicas racing', async () => {
    const schedulers = await Promise.all([1, 2, 3].map(() => startScheduler(systemClock, 50)));
    const ids: string[] = [];
    try {
      for (const name of ['one', 'two', 'three']) {
        const res = await api.post('/agent/schedules', {
          name,
          cron_schedule: '@every 1s',
          prompt: `tick ${name}`,
        });
        ids.push(res.body.id);
      }
      for (const id of ids) {
        await waitFor(
          () => runsOf(id),
          (runs) => runs.length >= 4,
          {
            what: `four runs of schedule ${id}`,
            timeoutMs: 30_000,
          },
        );
      }
      for (const id of ids) await api.post(`/agent/schedules/${id}/pause`);
    } finally {
      await Promise.all(schedulers.map((s) => s.close()));
    }

    for (const id of ids) {
      const firings = await firingsOf(id);
      const runs = await runsOf(id);
      const spawned = firings.filter((f) => f.status === 'spawned');
      // One run per spawned firing, the very run the firing recorded, and nothing else.
      expect(firings.filter((f) => f.status === 'pending')).toEqual([]);
      expect(runs.map((r) => r.run_id).sort()).toEqual(spawned.map((f) => f.run_id).sort());
      expect(new Set(runs.map((r) => r.run_id)).size).toBe(runs.length);
      // Every tick between the first and the last firing is accounted for exactly once: fired,
      // or counted as missed by the firing after it (when the schedulers fell behind).
      for (let i = 1; i < firings.length; i++) {
        const gap = firings[i].scheduled_for.getTime() - firings[i - 1].scheduled_for.getTime();
        expect(gap).toBe(1000 * (1 + firings[i].missed_ticks));
      }
    }
  });

  it('fires a tick missed while no scheduler ran once, within the catch-up window', async () => {
    const schedule = await hourly('Caught up');
    const tick = schedule.nextRun;
    // Every scheduler was down at `tick`; one starts two minutes later.
    const clock = new ManualClock(new Date(tick.getTime() + 2 * 60_000));
    const scheduler = await startScheduler(clock);
    try {
      const loop = scheduler.get(SchedulerLoop);
      for (let i = 0; i < 3; i++) await loop.tick();
      const runs = await runsOf(schedule.id);
      expect(runs).toHaveLength(1);
      const after = await item(schedule.id);
      expect(after.history.next_run).toBe(new Date(tick.getTime() + 3_600_000).toISOString());
      expect(after.history.last_ran).not.toBeNull();
      expect(after.last_spawn_error).toBeNull();
      expect((await firingsOf(schedule.id))[0].scheduled_for.toISOString()).toBe(
        tick.toISOString(),
      );
    } finally {
      await scheduler.close();
    }
  });

  it('skips and notes a tick missed by more than the catch-up window', async () => {
    const schedule = await hourly('Too late');
    const tick = schedule.nextRun;
    const clock = new ManualClock(new Date(tick.getTime() + 10 * 60_000));
    const scheduler = await startScheduler(clock);
    try {
      const loop = scheduler.get(SchedulerLoop);
      await loop.tick();
      expect(await runsOf(schedule.id)).toEqual([]);
      const skipped = await item(schedule.id);
      expect(skipped.last_spawn_error).toContain(`from ${tick.toISOString()} were missed`);
      expect(skipped.last_spawn_error).toContain('older than the 300s catch-up window: skipped');
      expect(skipped.history.next_run).toBe(new Date(tick.getTime() + 3_600_000).toISOString());

      // The schedule goes on: the next tick fires, and its success clears the note.
      clock.set(new Date(tick.getTime() + 3_600_000 + 500));
      await loop.tick();
      expect(await runsOf(schedule.id)).toHaveLength(1);
      expect((await item(schedule.id)).last_spawn_error).toBeNull();
    } finally {
      await scheduler.close();
    }
  });

  it('turns a tick claimed by a scheduler that then died into exactly one run', async () => {
    const schedule = await hourly('Orphaned');
    const tick = schedule.nextRun;
    const doomed = await startScheduler(new ManualClock(new Date(tick.getTime() + 1000)));
    const {
      firingIds: [firingId],
    } = await doomed.get(ScheduleFirings).claimDue();
    expect(firingId).toBeDefined();
    await doomed.close(); // "dies" after committing the claim, before creating the run
    expect(await runsOf(schedule.id)).toEqual([]);
    const [pending] = await firingsOf(schedule.id);
    expect(pending.status).toBe('pending');

    const clock = new ManualClock(new Date(tick.getTime() + 10_000));
    const survivor = await startScheduler(clock, 1000);
    try {
      const loop = survivor.get(SchedulerLoop);
      for (let i = 0; i < 3; i++) await loop.tick();
      const runs = await runsOf(schedule.id);
      expect(runs.map((r) => r.run_id)).toEqual([pending.run_id]);
      expect(runs[0].schedule).toEqual({
        schedule_id: schedule.id,
        schedule_name: 'Orphaned',
        cron_schedule: '0 * * * *',
      });
      expect((await firingsOf(schedule.id))[0].status).toBe('spawned');
    } finally {
      await survivor.close();
    }
  });

  it('does not make a second run when the scheduler died after creating the run', async () => {
    const schedule = await hourly('Half done');
    const tick = schedule.nextRun;
    const doomed = await startScheduler(new ManualClock(new Date(tick.getTime() + 1000)));
    await doomed.get(ScheduleFirings).claimDue();
    const [firing] = await firingsOf(schedule.id);
    // The run got committed, then the process died before marking the firing spawned.
    await doomed.get(RunCreationService).create({
      runId: firing.run_id!,
      teamId: (await item(schedule.id)).scope.uid,
      creatorId: null,
      source: 'SCHEDULED_AGENT',
      prompt: 'Half done',
      scheduleInfo: {
        schedule_id: schedule.id,
        schedule_name: 'Half done',
        cron_schedule: '0 * * * *',
      },
    });
    await doomed.close();

    const survivor = await startScheduler(new ManualClock(new Date(tick.getTime() + 10_000)), 1000);
    try {
      await survivor.get(SchedulerLoop).tick();
      expect((await runsOf(schedule.id)).map((r) => r.run_id)).toEqual([firing.run_id]);
      expect((await firingsOf(schedule.id))[0].status).toBe('spawned');
    } finally {
      await survivor.close();
    }
  });
});
