import { Logger } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { fake } from '../../../test/support/unit/fake';
import type { AppConfig } from '../../config/app-config';
import type { RunCapacity, RunLeaseRepository, RunQueue, RunTransitions } from '../runs';
import { RunSweeper } from './run-sweeper.service';

/**
 * The sweeper's safety net for runs waiting for a slot, with the capacity service faked: with
 * more teams waiting than it looks at in one sweep, it takes them in turns.
 */
describe('RunSweeper: teams with waiting runs', () => {
  const config = { runs: { dispatchSweepIntervalMs: 1000, dispatchGraceMs: 1000 } } as AppConfig;
  const teamIds = (from: number, count: number) =>
    Array.from({ length: count }, (_, i) => `team-${String(from + i).padStart(4, '0')}`);

  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(['log', 'warn', 'error']));

  /** A sweeper whose capacity service says `waiting` teams wait (in id order, as the SQL does). */
  function sweeperOver(waiting: string[]) {
    const capacity = fake<RunCapacity>();
    capacity.teamsWaiting.mockImplementation(async (limit: number, after?: string) =>
      waiting.filter((id) => after === undefined || id > after).slice(0, limit),
    );
    capacity.dispatchWaiting.mockResolvedValue(0);
    const records = fake<RunLeaseRepository>();
    records.lapsedLeases.mockResolvedValue([]);
    records.queuedWithoutWorkerHost.mockResolvedValue([]);
    const sweeper = new RunSweeper(
      config,
      records,
      fake<RunQueue>(),
      fake<RunTransitions>(),
      capacity,
      new SchedulerRegistry(),
    );
    const task = (sweeper as unknown as { tasks: { runNow(): Promise<void> }[] }).tasks[0];
    /** The teams each of `count` sweeps looked at. */
    const sweeps = async (count: number): Promise<string[][]> => {
      const looked: string[][] = [];
      for (let i = 0; i < count; i++) {
        capacity.dispatchWaiting.mockClear();
        await task.runNow();
        looked.push(capacity.dispatchWaiting.mock.calls.map(([teamId]) => teamId));
      }
      return looked;
    };
    return { capacity, sweeps };
  }

  it('goes on after the last team of the previous sweep, and past the last team from the first again', async () => {
    // 450 teams wait, 200 looked at per sweep: 0–199, 200–399, 400–449 with 0–149, 150–349.
    const all = teamIds(0, 450);
    const looked = await sweeperOver(all).sweeps(4);

    expect(looked.map((teams) => teams.length)).toEqual([200, 200, 200, 200]);
    expect(new Set(looked.slice(0, 3).flat())).toEqual(new Set(all));
    expect(looked[2]).toEqual([...all.slice(400), ...all.slice(0, 150)]);
    expect(looked[3]).toEqual(all.slice(150, 350));
  });

  it('looks at every team in every sweep when a batch holds them all, exactly or not', async () => {
    for (const count of [200, 7]) {
      const all = teamIds(0, count);
      const looked = await sweeperOver(all).sweeps(3);
      expect(looked).toEqual([all, all, all]);
    }
  });

  it('goes on to the other teams when one team fails', async () => {
    const all = teamIds(0, 3);
    const { capacity, sweeps } = sweeperOver(all);
    capacity.dispatchWaiting.mockImplementation(async (teamId: string) => {
      if (teamId === all[0]) throw new Error('deadlock');
      return 1;
    });
    const [looked] = await sweeps(1);
    expect(looked).toEqual(all);
    expect(
      await Promise.all(
        capacity.dispatchWaiting.mock.results.map((r) => r.value.catch(() => 'failed')),
      ),
    ).toEqual(['failed', 1, 1]);
  });
});
