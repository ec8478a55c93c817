import { getDataSourceToken } from '@nestjs/typeorm';
import { APP_CONFIG } from '../../config/app-config';
import { newTestService } from '../../../test/support/unit/new-test-service';
import { eventTypes, insertRun, runRow } from '../../../test/support/unit/run-rows';
import { useTestDatabase } from '../../../test/support/unit/test-database';
import { RunLookupRepository, RunLeaseRepository } from '../runs';
import { ExecutionFence } from './execution-fence';
import { ExecutionLeases } from './execution-lease';
import { realRunTransitions } from '../../../test/support/unit/run-transitions';

describe('ExecutionLeases.claim (database)', () => {
  const db = useTestDatabase('leases');
  let leases: ExecutionLeases;

  /** A worker's leases on the test database (each call: another worker). */
  const workerLeases = async () =>
    (
      await newTestService(ExecutionLeases, [
        { provide: getDataSourceToken(), useValue: db.dataSource },
        { provide: APP_CONFIG, useValue: { runs: { leaseMs: 60_000 } } },
        ...realRunTransitions,
        RunLookupRepository,
        RunLeaseRepository,
        ExecutionFence,
      ])
    ).sut;

  beforeEach(async () => {
    leases = await workerLeases();
  });

  it('claims and starts a queued run at once: INPROGRESS, both events in order, the run as it is now', async () => {
    const runId = await insertRun(db.dataSource, db.teamId, {
      state: 'QUEUED',
      executionCount: 2,
      config: { harness: { type: 'oz' } },
    });
    const claimed = await leases.claim(runId);
    expect(claimed).toMatchObject({
      state: 'INPROGRESS',
      executionCount: 3,
      attempt: 3,
      leaseOwner: leases.workerId,
    });
    const [row] = (await db.dataSource.query(
      'SELECT started_at, lease_owner FROM runs WHERE id = ?',
      [runId],
    )) as { started_at: Date | null; lease_owner: string }[];
    expect(row.started_at).toEqual((claimed as { startedAt: Date }).startedAt);
    expect(await runRow(db.dataSource, runId)).toMatchObject({
      state: 'INPROGRESS',
      execution_count: 3,
      lease_owner: leases.workerId,
    });
    const [claimedEvent, startedEvent] = (await db.dataSource.query(
      'SELECT event_type, execution_id, payload FROM run_events WHERE run_id = ? ORDER BY id',
      [runId],
    )) as { event_type: string; execution_id: number; payload: unknown }[];
    expect(claimedEvent).toMatchObject({ event_type: 'oz_run_claimed', execution_id: 3 });
    expect(startedEvent).toMatchObject({ event_type: 'agent_started', execution_id: 3 });
    expect(await eventTypes(db.dataSource, runId)).toEqual(['oz_run_claimed', 'agent_started']);
  });

  it('lets one of two workers claim a run: the other gets nothing and no events of its own', async () => {
    const runId = await insertRun(db.dataSource, db.teamId, { state: 'QUEUED' });
    const other = await workerLeases();
    const results = await Promise.all([leases.claim(runId), other.claim(runId)]);
    const won = results.filter((r) => r !== null) as { leaseOwner: string }[];
    expect(won).toHaveLength(1);
    expect(await runRow(db.dataSource, runId)).toMatchObject({
      state: 'INPROGRESS',
      execution_count: 1,
      lease_owner: won[0].leaseOwner,
    });
    expect(await eventTypes(db.dataSource, runId)).toEqual(['oz_run_claimed', 'agent_started']);
  });

  it('claims nothing that a cancel ended after the worker read it', async () => {
    const runId = await insertRun(db.dataSource, db.teamId, { state: 'QUEUED' });
    const lookup = (leases as unknown as { runLookup: RunLookupRepository }).runLookup;
    const find = lookup.find.bind(lookup);
    jest.spyOn(lookup, 'find').mockImplementationOnce(async (id: string) => {
      const seen = await find(id);
      await db.dataSource.query("UPDATE runs SET state = 'CANCELLED' WHERE id = ?", [id]);
      return seen;
    });
    expect(await leases.claim(runId)).toBeNull();
    expect(await runRow(db.dataSource, runId)).toMatchObject({
      state: 'CANCELLED',
      lease_owner: null,
    });
    expect(await eventTypes(db.dataSource, runId)).toEqual([]);
  });

  it('claims nothing that is not queued', async () => {
    const runId = await insertRun(db.dataSource, db.teamId, { state: 'INPROGRESS' });
    expect(await leases.claim(runId)).toBeNull();
    expect(await eventTypes(db.dataSource, runId)).toEqual([]);
  });
});
