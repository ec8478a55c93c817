import type { DataSource, EntityManager } from 'typeorm';
import { fake } from '../../../test/support/unit/fake';
import { LimitsService } from '../limits';
import { RunCapacity } from './run-capacity.service';
import { RunQueue } from './run-queue.service';
import { RunSlotRepository } from './run-slot.repository';
import { RunTransitions } from './run-transitions.service';
import { RunChanges } from './live/run-changes.service';

describe('RunCapacity: the wake-up after a run left its slot', () => {
  const build = () => {
    const teamOf = jest.fn(async () => 'team-read');
    const dataSource = fake<DataSource>({ subscribers: [] } as Partial<DataSource>);
    let released!: (runId: string, manager: EntityManager, teamId: string | null) => void;
    const transitions = fake<RunTransitions>({
      onSlotReleased: (listener) => void (released = listener),
    });
    const capacity = new RunCapacity(
      dataSource,
      fake<LimitsService>({ onChanged: () => undefined }),
      fake<RunQueue>(),
      fake<RunChanges>(),
      fake<RunSlotRepository>({ teamOf }),
      transitions,
    );
    const dispatched = jest.spyOn(capacity, 'dispatchWaiting').mockResolvedValue(0);
    // Outside a transaction: the wake-up goes at once.
    const manager = { queryRunner: undefined } as unknown as EntityManager;
    return { teamOf, released, manager, dispatched };
  };

  it("dispatches the team the transition named, without reading the run's team", async () => {
    const { teamOf, released, manager, dispatched } = build();
    released('run-1', manager, 'team-known');
    await new Promise((resolve) => setImmediate(resolve));
    expect(dispatched).toHaveBeenCalledWith('team-known');
    expect(teamOf).not.toHaveBeenCalled();
  });

  it("reads the run's team when the transition did not know it", async () => {
    const { teamOf, released, manager, dispatched } = build();
    released('run-2', manager, null);
    await new Promise((resolve) => setImmediate(resolve));
    expect(teamOf).toHaveBeenCalledWith('run-2');
    expect(dispatched).toHaveBeenCalledWith('team-read');
  });
});
