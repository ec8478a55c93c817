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

  it('goes on after the last team of a full batch at the next sweep, and from the first after a short one', async () => {
    // 450 teams wait: batches of 200, 200 and 50, then the first 200 again.
    const all = teamIds(0, 450);
    const capacity = fake<RunCapacity>();
    capacity.teamsWaiting.mockImplementation(async (limit: number, after?: string) =>
      all.filter((id) => after === undefined || id > after).slice(0, limit),
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
    const sweep = () =>
      (sweeper as unknown as { tasks: { runNow(): Promise<void> }[] }).tasks[0].runNow();
    const looked: string[][] = [];
    for (let i = 0; i < 4; i++) {
      capacity.dispatchWaiting.mockClear();
      await sweep();
      looked.push(capacity.dispatchWaiting.mock.calls.map(([teamId]) => teamId));
    }

    expect(looked.map((teams) => teams.length)).toEqual([200, 200, 50, 200]);
    expect(new Set(looked.slice(0, 3).flat())).toEqual(new Set(all));
    expect(looked[3]).toEqual(looked[0]);
  });
});
