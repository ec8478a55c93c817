import { getDataSourceToken } from '@nestjs/typeorm';
import { Fake } from '../../../test/support/unit/fake';
import { newTestService } from '../../../test/support/unit/new-test-service';
import { AmbientMetrics } from '../metrics';
import { eventTypes, insertFollowup, insertRun, runRow } from '../../../test/support/unit/run-rows';
import { useTestDatabase } from '../../../test/support/unit/test-database';
import { waitFor } from '../../../test/support/wait';
import { FOLLOWUPS_DROPPED, RunTransitions } from './run-transitions.service';
import { RunTransitionRepository } from './run-transition.repository';
import { RunEventRepository } from './run-event.repository';
import { RunFollowupRepository } from './run-followup.repository';
import { RunUsageRepository } from './run-usage.repository';

/** RunTransitions on a real database: the state machine guards every UPDATE, cancel is final. */
describe('RunTransitions (database)', () => {
  const db = useTestDatabase('transitions');
  let transitions: RunTransitions;
  let metrics: Fake<AmbientMetrics>;

  beforeEach(async () => {
    const built = await newTestService(RunTransitions, [
      { provide: getDataSourceToken(), useValue: db.dataSource },
      RunTransitionRepository,
      RunEventRepository,
      RunFollowupRepository,
      RunUsageRepository,
    ]);
    transitions = built.sut;
    metrics = built.fakeOf(AmbientMetrics);
  });

  it('moves a queued run to CLAIMED with the columns asked for and records the claim event', async () => {
    const runId = await insertRun(db.dataSource, db.teamId);
    const moved = await transitions.transition(runId, 'CLAIMED', {
      set: { leaseOwner: 'worker-1', executionCount: 1 },
      event: { executionId: 1 },
    });
    expect(moved).toBe(true);
    expect(await runRow(db.dataSource, runId)).toMatchObject({
      state: 'CLAIMED',
      lease_owner: 'worker-1',
      execution_count: 1,
    });
    expect(await eventTypes(db.dataSource, runId)).toEqual(['oz_run_claimed']);
  });

  it('lets a cancel wait for a claim that also starts the run in its transaction, without a deadlock', async () => {
    // Other queued runs: the state index is then a plausible way to the row for the optimizer.
    for (let i = 0; i < 3; i++) await insertRun(db.dataSource, db.teamId);
    const runId = await insertRun(db.dataSource, db.teamId);
    const claim = db.dataSource.createQueryRunner();
    await claim.connect();
    try {
      await claim.startTransaction();
      const claimed = await transitions.transition(
        runId,
        'CLAIMED',
        { set: { leaseOwner: 'worker-1', executionCount: 1 }, event: { executionId: 1 } },
        claim.manager,
      );
      expect(claimed).toBe(true);
      const settled = transitions.transition(runId, 'CANCELLED', { from: ['QUEUED'] }).then(
        (applied) => (applied ? 'cancelled' : 'refused'),
        (err: Error) => `failed: ${err.message}`,
      );
      // The cancel's UPDATE is under way, so waiting for the claim's row lock (seen by MySQL; it
      // waits there until the claim ends, however loaded the machine).
      const waiting = await waitFor(
        async () =>
          (
            (await db.dataSource.query(
              `SELECT INFO AS sql_text FROM information_schema.PROCESSLIST
                WHERE DB = DATABASE() AND INFO LIKE 'UPDATE \`runs\` SET \`state\` = ''CANCELLED''%'`,
            )) as { sql_text: string }[]
          )[0]?.sql_text,
        (sql) => sql !== undefined,
        // Inside the file's 30 s jest timeout, so the miss is reported and the finally rolls back.
        { timeoutMs: 15_000, intervalMs: 20, what: "the cancel's UPDATE waiting for the claim" },
      );
      // It reaches the row by its primary key alone: through a state index it took next-key locks
      // there and, on a small table whose plan chose that index, deadlocked with the start below.
      const [plan] = (await db.dataSource.query(`EXPLAIN ${waiting}`)) as {
        possible_keys: string;
      }[];
      expect(plan.possible_keys).toBe('PRIMARY');
      const started = await transitions.transition(
        runId,
        'INPROGRESS',
        { from: ['CLAIMED'], event: { executionId: 1 } },
        claim.manager,
      );
      expect(started).toBe(true);
      await claim.commitTransaction();
      expect(await settled).toBe('refused');
    } finally {
      if (claim.isTransactionActive) await claim.rollbackTransaction();
      await claim.release();
    }
    expect((await runRow(db.dataSource, runId)).state).toBe('INPROGRESS');
    expect(await eventTypes(db.dataSource, runId)).toEqual(['oz_run_claimed', 'agent_started']);
  });

  it('moves a run through a state on its way in one UPDATE, recording both events in order', async () => {
    const runId = await insertRun(db.dataSource, db.teamId);
    const moved = await transitions.transition(runId, 'INPROGRESS', {
      from: ['QUEUED'],
      via: { state: 'CLAIMED', event: { executionId: 1, payload: { worker_id: 'w-1' } } },
      set: { leaseOwner: 'w-1', executionCount: 1 },
      event: { executionId: 1, payload: { harness: 'oz' } },
    });
    expect(moved).toBe(true);
    const [row] = (await db.dataSource.query(
      'SELECT state, lease_owner, execution_started_at FROM runs WHERE id = ?',
      [runId],
    )) as { state: string; lease_owner: string; execution_started_at: Date | null }[];
    // The clock a claim starts is running: passing CLAIMED counts as entering it.
    expect(row).toMatchObject({ state: 'INPROGRESS', lease_owner: 'w-1' });
    expect(row.execution_started_at).toBeInstanceOf(Date);
    const events = (await db.dataSource.query(
      'SELECT event_type, execution_id, payload FROM run_events WHERE run_id = ? ORDER BY id',
      [runId],
    )) as { event_type: string; execution_id: number; payload: string | object }[];
    expect(
      events.map((e) => ({
        type: e.event_type,
        execution: e.execution_id,
        payload: typeof e.payload === 'string' ? JSON.parse(e.payload) : e.payload,
      })),
    ).toEqual([
      { type: 'oz_run_claimed', execution: 1, payload: { worker_id: 'w-1' } },
      { type: 'agent_started', execution: 1, payload: { harness: 'oz' } },
    ]);

    // Guarded by the states leading to the state passed through: a claimed run is not claimed again.
    const claimed = await insertRun(db.dataSource, db.teamId, { state: 'CLAIMED' });
    expect(await transitions.transition(claimed, 'INPROGRESS', { via: { state: 'CLAIMED' } })).toBe(
      false,
    );
    expect(await runRow(db.dataSource, claimed)).toMatchObject({ state: 'CLAIMED' });
    expect(await eventTypes(db.dataSource, claimed)).toEqual([]);
    // A way the state machine does not have is a caller's error, and writes nothing.
    const queued = await insertRun(db.dataSource, db.teamId);
    await expect(
      transitions.transition(queued, 'SUCCEEDED', { via: { state: 'CLAIMED' } }),
    ).rejects.toThrow('no transition from CLAIMED to SUCCEEDED');
    expect(await runRow(db.dataSource, queued)).toMatchObject({ state: 'QUEUED' });
  });

  it('refuses a move the state machine forbids and changes nothing', async () => {
    const runId = await insertRun(db.dataSource, db.teamId, { state: 'SUCCEEDED' });
    expect(await transitions.transition(runId, 'INPROGRESS')).toBe(false);
    const cancelled = await insertRun(db.dataSource, db.teamId, { state: 'CANCELLED' });
    expect(await transitions.transition(cancelled, 'QUEUED')).toBe(false);
    expect((await runRow(db.dataSource, runId)).state).toBe('SUCCEEDED');
    expect((await runRow(db.dataSource, cancelled)).state).toBe('CANCELLED');
    expect(await eventTypes(db.dataSource, runId)).toEqual([]);
  });

  it('loses to whoever moved the run first: a narrowed `from` or a failed guard is refused', async () => {
    const runId = await insertRun(db.dataSource, db.teamId, {
      state: 'INPROGRESS',
      executionCount: 2,
      leaseOwner: 'worker-2',
    });
    expect(await transitions.transition(runId, 'SUCCEEDED', { from: ['CLAIMED'] })).toBe(false);
    const staleGuard = { sql: 'execution_count = :seen', params: { seen: 1 } };
    expect(await transitions.transition(runId, 'SUCCEEDED', { where: staleGuard })).toBe(false);
    expect((await runRow(db.dataSource, runId)).state).toBe('INPROGRESS');
    const currentGuard = { sql: 'execution_count = :seen', params: { seen: 2 } };
    expect(await transitions.transition(runId, 'SUCCEEDED', { where: currentGuard })).toBe(true);
    expect((await runRow(db.dataSource, runId)).state).toBe('SUCCEEDED');
  });

  it('gives every end its time unless the caller sets one, and a blocked or continued run none', async () => {
    const finishedAt = async (runId: string) => {
      const [row] = (await db.dataSource.query('SELECT finished_at FROM runs WHERE id = ?', [
        runId,
      ])) as { finished_at: Date | null }[];
      return row.finished_at;
    };
    const ended = await insertRun(db.dataSource, db.teamId, { state: 'INPROGRESS' });
    const before = Date.now();
    expect(await transitions.transition(ended, 'FAILED')).toBe(true);
    expect((await finishedAt(ended))!.getTime()).toBeGreaterThanOrEqual(before - 1);
    const given = await insertRun(db.dataSource, db.teamId, { state: 'QUEUED' });
    const at = new Date('2026-01-02T03:04:05.678Z');
    expect(await transitions.transition(given, 'CANCELLED', { set: { finishedAt: at } })).toBe(
      true,
    );
    expect(await finishedAt(given)).toEqual(at);
    // BLOCKED waits for a person: it has not ended.
    const blocked = await insertRun(db.dataSource, db.teamId, { state: 'INPROGRESS' });
    expect(await transitions.transition(blocked, 'BLOCKED')).toBe(true);
    expect(await finishedAt(blocked)).toBeNull();
    const continued = await insertRun(db.dataSource, db.teamId, { state: 'SUCCEEDED' });
    expect(await transitions.transition(continued, 'QUEUED', { set: { finishedAt: null } })).toBe(
      true,
    );
    expect(await finishedAt(continued)).toBeNull();
  });

  it("measures an end from the run read back, or from the caller's run without a read, at the transition's time", async () => {
    const [read, given] = [
      await insertRun(db.dataSource, db.teamId, { state: 'INPROGRESS' }),
      await insertRun(db.dataSource, db.teamId, { state: 'INPROGRESS' }),
    ];
    await transitions.transition(read, 'SUCCEEDED');
    const [row] = (await db.dataSource.query(
      'SELECT created_at, updated_at FROM runs WHERE id = ?',
      [read],
    )) as { created_at: Date; updated_at: Date }[];
    expect(metrics.runEnded).toHaveBeenLastCalledWith(
      'SUCCEEDED',
      row.created_at,
      null,
      row.updated_at,
    );
    const known = {
      id: given,
      teamId: db.teamId,
      modelId: null,
      executionCount: 1,
      statusMessage: { message: 'done' },
      requestUsage: null,
      createdAt: new Date('2026-01-01T00:00:00Z'),
      startedAt: new Date('2026-01-01T00:00:01Z'),
    };
    await transitions.transition(given, 'SUCCEEDED', { moved: known });
    const [moved] = (await db.dataSource.query('SELECT updated_at FROM runs WHERE id = ?', [
      given,
    ])) as { updated_at: Date }[];
    expect(metrics.runEnded).toHaveBeenLastCalledWith(
      'SUCCEEDED',
      known.createdAt,
      known.startedAt,
      moved.updated_at,
    );
  });

  it('drops the undelivered follow-ups of a cancelled run, naming them on the timeline', async () => {
    const runId = await insertRun(db.dataSource, db.teamId, { state: 'INPROGRESS' });
    const pending = await insertFollowup(db.dataSource, runId);
    const delivered = await insertFollowup(db.dataSource, runId, { consumed: true });
    expect(await transitions.transition(runId, 'CANCELLED')).toBe(true);

    const rows = (await db.dataSource.query(
      `SELECT id, dropped_at FROM run_followups WHERE run_id = ?`,
      [runId],
    )) as { id: string; dropped_at: Date | null }[];
    const dropped = new Map(rows.map((r) => [r.id, r.dropped_at !== null]));
    expect(dropped.get(pending)).toBe(true);
    expect(dropped.get(delivered)).toBe(false);
    expect(await eventTypes(db.dataSource, runId)).toEqual(['oz_run_cancelled', FOLLOWUPS_DROPPED]);
    const [event] = (await db.dataSource.query(
      `SELECT payload FROM run_events WHERE run_id = ? AND event_type = ?`,
      [runId, FOLLOWUPS_DROPPED],
    )) as { payload: { followup_ids: string[] } }[];
    expect(event.payload.followup_ids).toEqual([pending]);
  });

  it('keeps what a cancelled execution cost only while the run is cancelled at that execution', async () => {
    const usage = { inference_cost: 0.5 } as never;
    const runId = await insertRun(db.dataSource, db.teamId, {
      state: 'CANCELLED',
      executionCount: 3,
    });
    expect(await transitions.recordCancelledUsage({ runId, executionId: 2 }, usage)).toBe(false);
    expect((await runRow(db.dataSource, runId)).request_usage).toBeNull();
    expect(await transitions.recordCancelledUsage({ runId, executionId: 3 }, usage)).toBe(true);
    expect((await runRow(db.dataSource, runId)).request_usage).toEqual({ inference_cost: 0.5 });

    const running = await insertRun(db.dataSource, db.teamId, {
      state: 'INPROGRESS',
      executionCount: 1,
    });
    expect(await transitions.recordCancelledUsage({ runId: running, executionId: 1 }, usage)).toBe(
      false,
    );
  });

  it('adds each execution to run_time_ms as it ends, and none of the time between executions', async () => {
    const runId = await insertRun(db.dataSource, db.teamId);
    const clock = async () => {
      const [row] = (await db.dataSource.query(
        'SELECT run_time_ms, execution_started_at FROM runs WHERE id = ?',
        [runId],
      )) as { run_time_ms: string; execution_started_at: Date | null }[];
      return { ms: Number(row.run_time_ms), started: row.execution_started_at };
    };
    /** Moves the running execution's start `seconds` back: it has run that long. */
    const ranFor = (seconds: number) =>
      db.dataSource.query(
        'UPDATE runs SET execution_started_at = execution_started_at - INTERVAL ? SECOND WHERE id = ?',
        [seconds, runId],
      );

    // The real time the statements take is counted too: bounded by the wall time around them.
    const within = (since: number) => Date.now() - since + 10;
    const firstSince = Date.now();
    expect(await transitions.transition(runId, 'CLAIMED')).toBe(true);
    expect((await clock()).started).toBeInstanceOf(Date);
    await ranFor(5);
    expect(await transitions.transition(runId, 'INPROGRESS')).toBe(true);
    expect(await transitions.transition(runId, 'SUCCEEDED')).toBe(true);
    const first = await clock();
    expect(first.started).toBeNull();
    expect(first.ms).toBeGreaterThanOrEqual(5000);
    expect(first.ms).toBeLessThanOrEqual(5000 + within(firstSince));

    // A follow-up queues it again; however long it waited, only the next execution counts.
    expect(await transitions.transition(runId, 'QUEUED')).toBe(true);
    expect((await clock()).ms).toBe(first.ms);
    const secondSince = Date.now();
    expect(await transitions.transition(runId, 'CLAIMED')).toBe(true);
    await ranFor(2);
    expect(await transitions.transition(runId, 'INPROGRESS')).toBe(true);
    expect(await transitions.transition(runId, 'BLOCKED')).toBe(true);
    const blocked = await clock();
    expect(blocked.ms - first.ms).toBeGreaterThanOrEqual(2000);
    expect(blocked.ms - first.ms).toBeLessThanOrEqual(2000 + within(secondSince));
    // Waiting for a person runs nothing: cancelling then adds no time.
    expect(await transitions.transition(runId, 'CANCELLED')).toBe(true);
    expect(await clock()).toEqual({ ms: blocked.ms, started: null });
  });
});
