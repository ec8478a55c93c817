import { getDataSourceToken } from '@nestjs/typeorm';
import { Fake } from '../../../test/support/unit/fake';
import { newTestService } from '../../../test/support/unit/new-test-service';
import { insertRun } from '../../../test/support/unit/run-rows';
import { useTestDatabase } from '../../../test/support/unit/test-database';
import { newUid } from '../../common/ids';
import { APP_CONFIG } from '../../config/app-config';
import { RunLookupRepository, RunTransitions } from '../runs';
import { NotificationDeliveryRepository } from './notification-delivery.repository';
import { NotificationEmitter } from './notification-emitter.service';
import { NotificationEndpointRepository } from './notification-endpoint.repository';
import { NotificationQueue } from './notification-queue';
import { RunEndNotifications } from './run-end-notifications';
import { TeamEndpoints } from './team-endpoints';
import { realRunTransitions } from '../../../test/support/unit/run-transitions';

/** A run's end and its notifications commit together, on a real database. */
describe('RunEndNotifications (database)', () => {
  const db = useTestDatabase('run_end_notify');
  let transitions: RunTransitions;
  let queue: Fake<NotificationQueue>;
  let teamEndpoints: TeamEndpoints;

  const insertEndpoint = async (events: string, enabled = true) => {
    const id = newUid();
    const now = new Date();
    await db.dataSource.query(
      `INSERT INTO notification_endpoints (id, team_id, url, events, format, enabled,
         secret_ciphertext, secret_updated_at, created_at, updated_at)
       VALUES (?, ?, 'https://hooks.example.com/x', ?, 'standard', ?, x'00', ?, ?, ?)`,
      [id, db.teamId, events, enabled, now, now, now],
    );
    return id;
  };

  const deliveriesOf = async (runId: string, manager = db.dataSource.manager) =>
    (
      (await manager.query(
        `SELECT endpoint_id, event, payload, status FROM notification_deliveries`,
      )) as { endpoint_id: string; event: string; payload: string; status: string }[]
    ).filter((row) => JSON.parse(row.payload).data.run.id === runId);

  beforeAll(async () => {
    const built = await newTestService(RunEndNotifications, [
      { provide: getDataSourceToken(), useValue: db.dataSource },
      { provide: APP_CONFIG, useValue: { server: { publicUrl: 'https://ambient.example/' } } },
      ...realRunTransitions,
      RunLookupRepository,
      NotificationEmitter,
      NotificationEndpointRepository,
      NotificationDeliveryRepository,
      // No broadcaster: every end reads the team's endpoints (the specs write them directly).
      {
        provide: TeamEndpoints,
        useFactory: () => new TeamEndpoints(new NotificationEndpointRepository(db.dataSource)),
      },
    ]);
    built.sut.onModuleInit();
    teamEndpoints = built.module.get(TeamEndpoints);
    transitions = built.module.get(RunTransitions);
    queue = built.fakeOf(NotificationQueue);
  });

  it("records one delivery per enabled endpoint subscribed to the end's event, queued after the commit", async () => {
    const failedOnly = await insertEndpoint('run.failed,run.cancelled');
    await insertEndpoint('run.succeeded');
    await insertEndpoint('run.failed', false);
    const runId = await insertRun(db.dataSource, db.teamId, { state: 'INPROGRESS' });

    const moved = await transitions.transition(runId, 'FAILED', {
      set: { statusMessage: { message: 'exit code 1' } },
    });

    expect(moved).toBe(true);
    const rows = await deliveriesOf(runId);
    expect(rows.map((row) => [row.endpoint_id, row.event, row.status])).toEqual([
      [failedOnly, 'run.failed', 'pending'],
    ]);
    expect(JSON.parse(rows[0].payload)).toEqual({
      type: 'run.failed',
      timestamp: expect.any(String),
      data: {
        run: {
          id: runId,
          state: 'FAILED',
          title: 'spec run',
          status_message: { message: 'exit code 1' },
          session_link: `https://ambient.example/console/runs/${runId}`,
          created_at: expect.any(String),
          updated_at: expect.any(String),
        },
      },
    });
    expect(queue.afterCommit).toHaveBeenCalledWith(expect.anything(), [
      { deliveryId: expect.any(String), nextAttemptAt: expect.any(Date) },
    ]);
  });

  it('records nothing when the transition rolls back, nor for a transition that is no end', async () => {
    await insertEndpoint('run.succeeded,run.failed,run.cancelled');
    const rolledBack = await insertRun(db.dataSource, db.teamId, { state: 'INPROGRESS' });
    const runner = db.dataSource.createQueryRunner();
    await runner.connect();
    try {
      await runner.startTransaction();
      expect(await transitions.transition(rolledBack, 'SUCCEEDED', {}, runner.manager)).toBe(true);
      // Written in the transition's transaction (here and to the first test's endpoint)...
      expect(await deliveriesOf(rolledBack, runner.manager)).toHaveLength(2);
      await runner.rollbackTransaction();
    } finally {
      await runner.release();
    }
    // ...and gone with it.
    expect(await deliveriesOf(rolledBack)).toEqual([]);

    const started = await insertRun(db.dataSource, db.teamId, { state: 'CLAIMED' });
    expect(await transitions.transition(started, 'INPROGRESS')).toBe(true);
    expect(await deliveriesOf(started)).toEqual([]);
  });

  it("records nothing for an endpoint deleted, disabled or unsubscribed since the team's endpoints were read", async () => {
    const deleted = await insertEndpoint('run.succeeded');
    const disabled = await insertEndpoint('run.succeeded');
    const unsubscribed = await insertEndpoint('run.succeeded');
    const kept = await insertEndpoint('run.succeeded');
    // What a replica that has not heard of the changes yet offers the end.
    const offered = [deleted, disabled, unsubscribed, kept].map((id) => ({
      id,
      events: ['run.succeeded'],
    }));
    await db.dataSource.query('DELETE FROM notification_endpoints WHERE id = ?', [deleted]);
    await db.dataSource.query('UPDATE notification_endpoints SET enabled = 0 WHERE id = ?', [
      disabled,
    ]);
    await db.dataSource.query(
      "UPDATE notification_endpoints SET events = 'run.failed' WHERE id = ?",
      [unsubscribed],
    );
    jest.spyOn(teamEndpoints, 'listening').mockResolvedValueOnce(offered);
    queue.afterCommit.mockClear();
    const runId = await insertRun(db.dataSource, db.teamId, { state: 'INPROGRESS' });

    expect(await transitions.transition(runId, 'SUCCEEDED')).toBe(true);

    expect((await deliveriesOf(runId)).map((row) => row.endpoint_id)).toEqual([kept]);
    expect(queue.afterCommit).toHaveBeenCalledWith(expect.anything(), [
      { deliveryId: expect.any(String), nextAttemptAt: expect.any(Date) },
    ]);
  });
});
