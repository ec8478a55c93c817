import { getDataSourceToken } from '@nestjs/typeorm';
import { Fake } from '../../../test/support/unit/fake';
import { newTestService } from '../../../test/support/unit/new-test-service';
import { insertRun, runRow } from '../../../test/support/unit/run-rows';
import { useTestDatabase } from '../../../test/support/unit/test-database';
import { FailedRunFollowups } from './failed-run-followups';
import { FollowupAnnouncements } from './followup-announcements';
import { Run } from './entities/run.entity';
import { RunFollowupsService } from './run-followups.service';
import { RunQueue } from './run-queue.service';
import { RunState } from './run-state';
import { RunLookupRepository } from './run-lookup.repository';
import { realRunTransitions } from '../../../test/support/unit/run-transitions';

/** Follow-ups on a real database: stored first, then routed by the state the run is in. */
describe('RunFollowupsService (database)', () => {
  const db = useTestDatabase('followups');
  let followups: RunFollowupsService;
  let queue: Fake<RunQueue>;
  let failedRunFollowups: Fake<FailedRunFollowups>;
  let announcements: Fake<FollowupAnnouncements>;

  beforeEach(async () => {
    const built = await newTestService(RunFollowupsService, [
      { provide: getDataSourceToken(), useValue: db.dataSource },
      ...realRunTransitions,
      RunLookupRepository,
    ]);
    followups = built.sut;
    queue = built.fakeOf(RunQueue);
    failedRunFollowups = built.fakeOf(FailedRunFollowups);
    announcements = built.fakeOf(FollowupAnnouncements);
  });

  const runIn = async (state: RunState) => {
    const id = await insertRun(db.dataSource, db.teamId, { state });
    return { id, teamId: db.teamId, workerHost: null } as Run;
  };
  const stored = (runId: string) =>
    db.dataSource.query(
      `SELECT message, outcome, consumed_at, dropped_at FROM run_followups WHERE run_id = ?`,
      [runId],
    ) as Promise<{ message: string; outcome: string }[]>;

  it('refuses an empty message or attachments with the field named, storing nothing', async () => {
    const run = await runIn('INPROGRESS');
    await expect(followups.submit(run, { message: '  ' })).rejects.toMatchObject({
      code: 'invalid_request',
      status: 400,
      detail: expect.stringContaining('message'),
    });
    await expect(
      followups.submit(run, { message: 'hi', attachments: [{ attachment_id: 'nope' }] }),
    ).rejects.toMatchObject({
      code: 'operation_not_supported',
      detail: expect.stringContaining('attachments[0].attachment_id'),
    });
    expect(await stored(run.id)).toEqual([]);
  });

  it('refuses a follow-up to a cancelled run with 409: cancel is final', async () => {
    const run = await runIn('CANCELLED');
    await expect(followups.submit(run, { message: 'one more thing' })).rejects.toMatchObject({
      code: 'conflict',
      status: 409,
    });
    expect(await stored(run.id)).toEqual([]);
    expect((await runRow(db.dataSource, run.id)).state).toBe('CANCELLED');
    expect(announcements.stored).not.toHaveBeenCalled();
  });

  it('queues a follow-up for a queued run and hands one to the live session of a running run', async () => {
    const queued = await runIn('QUEUED');
    expect(await followups.submit(queued, { message: 'first' })).toEqual({
      followup_id: null,
      outcome: 'queued_prompt',
    });
    const running = await runIn('INPROGRESS');
    const live = await followups.submit(running, { message: 'second' });
    expect(live).toEqual({ followup_id: expect.any(String), outcome: 'live_session' });
    expect(await followups.hasUndelivered(running.id)).toBe(true);
    expect(queue.dispatch).not.toHaveBeenCalled();
    // Announced (after the commit) so that the live execution reads it at its next turn.
    expect(announcements.stored.mock.calls.map(([, runId]) => runId)).toEqual([
      queued.id,
      running.id,
    ]);
  });

  it('continues an ended run: back to QUEUED and enqueued again, the follow-up handed off', async () => {
    const run = await runIn('SUCCEEDED');
    const answer = await followups.submit(run, { message: '  now the tests  ' });
    expect(answer).toEqual({ followup_id: expect.any(String), outcome: 'handoff_execution' });
    expect((await runRow(db.dataSource, run.id)).state).toBe('QUEUED');
    expect(queue.dispatch).toHaveBeenCalledWith(expect.objectContaining({ id: run.id }));
    expect(await stored(run.id)).toEqual([
      expect.objectContaining({ message: 'now the tests', outcome: 'handoff_execution' }),
    ]);
  });

  it('lets the debug agent answer inside the debug window of a failed setup; the run stays FAILED', async () => {
    const run = await runIn('FAILED');
    failedRunFollowups.take.mockResolvedValue(true);
    expect(await followups.submit(run, { message: 'why?' })).toEqual({
      followup_id: expect.any(String),
      outcome: 'live_session',
      debug_agent_active: true,
    });
    expect((await runRow(db.dataSource, run.id)).state).toBe('FAILED');
    expect(queue.dispatch).not.toHaveBeenCalled();
  });

  it('gives an execution every undelivered follow-up once, oldest first', async () => {
    const run = await runIn('INPROGRESS');
    await followups.submit(run, { message: 'one' });
    await followups.submit(run, { message: 'two' });
    expect(await followups.takeUndelivered(run.id, 1)).toEqual(['one', 'two']);
    expect(await followups.takeUndelivered(run.id, 2)).toEqual([]);
    expect(await followups.hasUndelivered(run.id)).toBe(false);
  });
});
