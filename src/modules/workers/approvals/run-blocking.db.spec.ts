import { randomUUID } from 'node:crypto';
import { getDataSourceToken } from '@nestjs/typeorm';
import { APP_CONFIG } from '../../../config/app-config';
import type { Fake } from '../../../../test/support/unit/fake';
import { newTestService } from '../../../../test/support/unit/new-test-service';
import { eventTypes, insertRun, runRow } from '../../../../test/support/unit/run-rows';
import { useTestDatabase } from '../../../../test/support/unit/test-database';
import { NotificationEmitter } from '../../notifications';
import type { Run } from '../../runs';
import { AgentIdentityRepository, IdentityApprovals } from '../../identities';
import { RunApprovalRepository, RunLookupRepository, RunLeaseRepository } from '../../runs';
import { ExecutionFence, StaleExecutionError } from '../execution-fence';
import type { LeaseToken } from '../execution-lease';
import type { ApprovalRequestDraft } from '../harness/harness.types';
import { WorkspaceRetentionService } from '../workspace/workspace-retention.service';
import { ExecutionApprovals } from './execution-approvals.service';
import { RunBlocking } from './run-blocking';
import { realRunTransitions } from '../../../../test/support/unit/run-transitions';

const BLOCKED_TIMEOUT_SECONDS = 7200;
const USAGE = { inference_cost_usd: 0.01 } as Run['requestUsage'];

const PENDING: ApprovalRequestDraft = {
  kind: 'approval',
  tool: 'run_command',
  toolCallId: 'call_0_1',
  arguments: { command: 'git push origin main' },
  rule: { command: '^git push', effect: 'ask' },
  summary: 'run_command: git push origin main',
};

/**
 * The BLOCKED end of an execution and the taking of decisions, on a real database with the
 * execution's fence: what commits together, and what a stale execution cannot do.
 */
describe('RunBlocking and ExecutionApprovals (database)', () => {
  const db = useTestDatabase('blocking');
  let blocking: RunBlocking;
  let approvals: ExecutionApprovals;
  let approvalsRepository: () => RunApprovalRepository;
  let emit: Fake<NotificationEmitter>['emit'];
  let keepUntil: Fake<WorkspaceRetentionService>['keepUntil'];

  beforeEach(async () => {
    const built = await newTestService(RunBlocking, [
      { provide: getDataSourceToken(), useValue: db.dataSource },
      {
        provide: APP_CONFIG,
        useValue: { runs: { blockedTimeoutSeconds: BLOCKED_TIMEOUT_SECONDS } },
      },
      ...realRunTransitions,
      RunLookupRepository,
      RunLeaseRepository,
      RunApprovalRepository,
      AgentIdentityRepository,
      IdentityApprovals,
      ExecutionFence,
      ExecutionApprovals,
    ]);
    blocking = built.sut;
    approvals = built.module.get(ExecutionApprovals);
    approvalsRepository = () => built.module.get(RunApprovalRepository);
    emit = built.fakeOf(NotificationEmitter).emit.mockResolvedValue(1);
    keepUntil = built
      .fakeOf(WorkspaceRetentionService)
      .keepUntil.mockImplementation((until: Date) => ({
        workspaceRetainedUntil: until,
        workspaceVolume: 'test-volume',
      }));
  });

  /** A run execution 1 holds as `worker-1`. */
  /** A run its `executionId`th execution holds (2: the one after a blocked first). */
  async function runningRun(executionId = 1): Promise<{ run: Run; token: LeaseToken }> {
    const id = await insertRun(db.dataSource, db.teamId, {
      state: 'INPROGRESS',
      executionCount: executionId,
      leaseOwner: 'worker-1',
    });
    const run = (await db.dataSource.getRepository('Run').findOneByOrFail({ id })) as Run;
    return { run, token: { runId: id, executionId, holder: { lease: 'worker-1' } } };
  }

  const requestsOf = async (runId: string) =>
    (await db.dataSource.query(
      'SELECT id, execution_id, kind, tool, tool_call_id, arguments, rule, summary, decision, taken_by_execution FROM run_approvals WHERE run_id = ?',
      [runId],
    )) as Record<string, unknown>[];

  async function insertRequest(
    runId: string,
    fields: { decision?: string | null; toolCallId?: string } = {},
  ): Promise<string> {
    const id = randomUUID();
    await db.dataSource.query(
      `INSERT INTO run_approvals (id, run_id, team_id, execution_id, kind, tool, tool_call_id,
         arguments, summary, requested_at, decision, decided_by)
       VALUES (?, ?, ?, 1, 'approval', 'run_command', ?, '{}', 'run_command: x', ?, ?, ?)`,
      [
        id,
        runId,
        db.teamId,
        fields.toolCallId ?? 'call_0_0',
        new Date(),
        fields.decision ?? null,
        fields.decision ? JSON.stringify({ type: 'user', id: 'u1', name: 'Alice' }) : null,
      ],
    );
    return id;
  }

  it('moves the run to BLOCKED with the request, its status message, no lease, the workspace kept for the blocked timeout, and approval.requested, together', async () => {
    const { run, token } = await runningRun();
    const before = Date.now();
    await blocking.block(run, token, PENDING, USAGE);

    const [request] = await requestsOf(run.id);
    expect(request).toMatchObject({
      execution_id: 1,
      kind: 'approval',
      tool: 'run_command',
      tool_call_id: 'call_0_1',
      arguments: { command: 'git push origin main' },
      rule: { command: '^git push', effect: 'ask' },
      summary: 'run_command: git push origin main',
      decision: null,
      taken_by_execution: null,
    });
    expect(await runRow(db.dataSource, run.id)).toMatchObject({
      state: 'BLOCKED',
      status_message: {
        message: 'Waiting for approval: run_command: git push origin main',
        pending_approval_id: request.id,
      },
      lease_owner: null,
      request_usage: USAGE,
    });
    const [row] = (await db.dataSource.query(
      'SELECT finished_at, workspace_retained_until FROM runs WHERE id = ?',
      [run.id],
    )) as { finished_at: Date | null; workspace_retained_until: Date }[];
    expect(row.finished_at).toBeNull();
    const kept = row.workspace_retained_until.getTime() - before;
    expect(kept).toBeGreaterThanOrEqual(BLOCKED_TIMEOUT_SECONDS * 1000 - 1000);
    expect(kept).toBeLessThan(BLOCKED_TIMEOUT_SECONDS * 1000 + 60_000);
    expect(keepUntil).toHaveBeenCalledTimes(1);
    expect(await eventTypes(db.dataSource, run.id)).toEqual(['oz_run_blocked']);
    const [{ payload }] = (await db.dataSource.query(
      'SELECT payload FROM run_events WHERE run_id = ?',
      [run.id],
    )) as { payload: Record<string, unknown> }[];
    expect(payload).toMatchObject({
      pending_approval_id: request.id,
      approval: { id: request.id, tool: 'run_command', summary: PENDING.summary },
    });
    expect(emit).toHaveBeenCalledWith(
      db.teamId,
      'approval.requested',
      expect.any(Function),
      expect.anything(),
    );
  });

  it('names the question of an ask_user request in the status message', async () => {
    const { run, token } = await runningRun();
    await blocking.block(
      run,
      token,
      { ...PENDING, kind: 'question', tool: 'ask_user', rule: null, summary: 'Which colour?' },
      USAGE,
    );
    expect((await runRow(db.dataSource, run.id)).status_message).toMatchObject({
      message: 'Waiting for an answer: Which colour?',
    });
  });

  it('writes nothing for an execution that no longer holds its run, and says so', async () => {
    const { run, token } = await runningRun();
    await db.dataSource.query("UPDATE runs SET lease_owner = 'worker-2' WHERE id = ?", [run.id]);
    await expect(blocking.block(run, token, PENDING, USAGE)).rejects.toThrow(StaleExecutionError);
    expect(await requestsOf(run.id)).toEqual([]);
    expect(await runRow(db.dataSource, run.id)).toMatchObject({
      state: 'INPROGRESS',
      lease_owner: 'worker-2',
    });
    expect(emit).not.toHaveBeenCalled();
  });

  it('blocks again on a request nobody decided without writing a second one', async () => {
    const { run, token } = await runningRun();
    const id = await insertRequest(run.id);
    await blocking.block(run, token, { ...PENDING, existingId: id }, USAGE);
    expect((await requestsOf(run.id)).map((r) => r.id)).toEqual([id]);
    expect((await runRow(db.dataSource, run.id)).status_message).toMatchObject({
      pending_approval_id: id,
    });
  });

  it('lets the holding execution take a decided request exactly once, and a stale one never', async () => {
    // The first execution made the requests (insertRequest) and blocked; the second resumes.
    const { run, token } = await runningRun(2);
    const decided = await insertRequest(run.id, { decision: 'approve', toolCallId: 'c1' });
    const undecided = await insertRequest(run.id, { toolCallId: 'c2' });
    expect(await approvals.awaiting(token)).toEqual({
      callIds: new Set(['c1', 'c2']),
      undecided: true,
    });
    const untaken = await approvals.untaken(run.id);
    expect(untaken.find((r) => r.id === decided)).toMatchObject({
      toolCallId: 'c1',
      decision: 'approve',
      decidedBy: 'Alice',
    });
    expect(await approvals.take(token, undecided)).toBe(false);

    const stale: LeaseToken = { ...token, holder: { lease: 'worker-2' } };
    await expect(approvals.take(stale, decided)).rejects.toThrow(StaleExecutionError);
    const both = await Promise.all([
      approvals.take(token, decided),
      approvals.take(token, decided),
    ]);
    expect(both.sort()).toEqual([false, true]);
    expect((await requestsOf(run.id)).find((r) => r.id === decided)).toMatchObject({
      taken_by_execution: 2,
    });
    expect((await approvals.untaken(run.id)).map((r) => r.id)).toEqual([undecided]);
  });

  it("reads no requests for a run's first execution (only executions make them), and reads them for the next", async () => {
    const repository = approvalsRepository();
    const reads = [jest.spyOn(repository, 'untaken'), jest.spyOn(repository, 'egressRequests')];
    const first = await runningRun(1);
    const prepared = await approvals.prepare(first.run, first.token, null);
    expect(await prepared.gate.untaken()).toEqual([]);
    expect(await approvals.awaiting(first.token)).toEqual({ callIds: new Set(), undecided: false });
    expect(prepared.approvedHosts).toEqual([]);
    expect(reads.map((read) => read.mock.calls.length)).toEqual([0, 0]);

    const second = await runningRun(2);
    await insertRequest(second.run.id, { toolCallId: 'c1' });
    const resumed = await approvals.prepare(second.run, second.token, null);
    expect((await resumed.gate.untaken()).map((r) => r.toolCallId)).toEqual(['c1']);
    expect(await approvals.awaiting(second.token)).toEqual({
      callIds: new Set(['c1']),
      undecided: true,
    });
    expect(reads.map((read) => read.mock.calls.length)).toEqual([2, 1]);
  });

  it('reads the effective rules from the environment, the agent identity and the run, and fails closed on a stored rule that does not parse', async () => {
    const identity = 'AgentIdentityAAAAAAAAA';
    await db.dataSource.query(
      `INSERT INTO users (id, team_id, email, display_name, type, created_at)
       VALUES (?, ?, NULL, 'agent', 'service_account', NOW(3))`,
      [identity, db.teamId],
    );
    await db.dataSource.query(
      `INSERT INTO agent_identities (user_id, team_id, name, settings, created_at, updated_at)
       VALUES (?, ?, 'agent', ?, NOW(3), NOW(3))`,
      [
        identity,
        db.teamId,
        JSON.stringify({ approvals: [{ mcp_tool: 'deploy', effect: 'deny' }] }),
      ],
    );
    const run = {
      teamId: db.teamId,
      executorId: identity,
      config: { approvals: [{ command: '^rm ', effect: 'ask' as const }] },
    };
    const environment = {
      config: { name: 'e', approvals: [{ egress: 'unlisted', effect: 'ask' }] },
    };
    expect(await approvals.rulesFor(run, environment as never)).toEqual([
      { egress: 'unlisted', effect: 'ask' },
      { mcp_tool: 'deploy', effect: 'deny' },
      { command: '^rm ', effect: 'ask' },
    ]);
    const broken = { config: { name: 'e', approvals: [{ command: '(', effect: 'ask' }] } };
    await expect(approvals.rulesFor(run, broken as never)).rejects.toThrow(
      /^the environment's approvals\.0\.command: is not a valid regular expression/,
    );
  });
});
