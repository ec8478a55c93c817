import type { EntityManager } from 'typeorm';
import { newUid } from '../../common/ids';
import { LoopbackBus } from '../../../test/support/unit/loopback-bus';
import { useTestDatabase } from '../../../test/support/unit/test-database';
import { settledWithin } from '../../../test/support/wait';
import { NotificationEndpointRepository } from './notification-endpoint.repository';
import { TeamEndpoints } from './team-endpoints';

describe('TeamEndpoints (database)', () => {
  const db = useTestDatabase('team_endpoints');

  const insertEndpoint = async (events: string) => {
    const now = new Date();
    const id = newUid();
    await db.dataSource.query(
      `INSERT INTO notification_endpoints (id, team_id, url, events, format, enabled,
         secret_ciphertext, secret_updated_at, created_at, updated_at)
       VALUES (?, ?, 'https://hooks.example.com/x', ?, 'standard', 1, x'00', ?, ?, ?)`,
      [id, db.teamId, events, now, now, now],
    );
    return id;
  };

  it("reads a miss inside a run's end in its own transaction, then serves the team from memory until a change", async () => {
    const succeeded = await insertEndpoint('run.succeeded,run.failed');
    await insertEndpoint('run.failed');
    const repository = new NotificationEndpointRepository(db.dataSource);
    const read = repository.enabledOfTeam.bind(repository);
    // The load outside the transaction waits until the test lets it go: the end must not.
    let letLoad!: () => void;
    const loadMayGo = new Promise<void>((resolve) => (letLoad = resolve));
    const reads = jest
      .spyOn(repository, 'enabledOfTeam')
      .mockImplementation(async (teamId: string, manager?: EntityManager) => {
        if (!manager) await loadMayGo;
        return read(teamId, manager);
      });
    const bus = new LoopbackBus();
    const endpoints = new TeamEndpoints(repository, bus);

    const inEnd = await settledWithin(
      db.dataSource.transaction(async (manager) => ({
        found: await endpoints.listening(db.teamId, 'run.succeeded', manager),
        manager,
      })),
      "the end's read while the load outside waits",
      10_000,
    );
    expect(inEnd.found.map((e) => e.id)).toEqual([succeeded]);
    expect(reads.mock.calls).toEqual([[db.teamId], [db.teamId, inEnd.manager]]);
    letLoad();
    // A read outside any transaction joins that load rather than reading again.
    expect((await endpoints.listening(db.teamId, 'run.failed')).length).toBe(2);
    await db.dataSource.transaction(async (manager) => {
      expect((await endpoints.listening(db.teamId, 'run.failed', manager)).length).toBe(2);
    });
    expect(reads).toHaveBeenCalledTimes(2);

    const added = await insertEndpoint('run.succeeded');
    await endpoints.changed(db.dataSource.manager, db.teamId);
    const after = await endpoints.listening(db.teamId, 'run.succeeded');
    expect(after.map((e) => e.id).sort()).toEqual([succeeded, added].sort());
  });

  it('reads once per end, in its transaction, while the broadcast is not heard', async () => {
    const repository = new NotificationEndpointRepository(db.dataSource);
    const reads = jest.spyOn(repository, 'enabledOfTeam');
    const bus = new LoopbackBus();
    const endpoints = new TeamEndpoints(repository, bus);
    bus.live = false;
    for (let end = 1; end <= 2; end++) {
      await db.dataSource.transaction((manager) =>
        endpoints.listening(db.teamId, 'run.succeeded', manager),
      );
      expect(reads).toHaveBeenCalledTimes(end);
    }
  });
});
