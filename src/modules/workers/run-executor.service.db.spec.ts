import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getDataSourceToken } from '@nestjs/typeorm';
import { APP_CONFIG } from '../../config/app-config';
import { fake, Fake } from '../../../test/support/unit/fake';
import { newTestService } from '../../../test/support/unit/new-test-service';
import { eventTypes, insertRun, runRow } from '../../../test/support/unit/run-rows';
import { useTestDatabase } from '../../../test/support/unit/test-database';
import { TranscriptWriter } from '../conversations';
import { RunSecretsService } from './execution-secrets.service';
import { WorkspaceRetentionService } from './workspace/workspace-retention.service';
import { WorkspaceSetupService } from './workspace/workspace-setup.service';
import { HarnessRegistry } from './harness/harness-registry';
import { Harness, HarnessContext, HarnessResult } from './harness/harness.types';
import { WorkspaceService } from './workspace/workspace.service';
import { ModelsService } from '../models';
import { SandboxService } from './sandbox/sandbox.service';
import type { SelectedSandbox } from './sandbox/sandbox-selection';
import { Sandbox, SandboxError } from './sandbox/sandbox.types';
import {
  RunFollowupsService,
  RunSignals,
  RunTransitions,
  RunLookupRepository,
  RunLeaseRepository,
  KeptWorkspaceRepository,
  RunApprovalRepository,
  RunEventRepository,
  RunAttachmentRepository,
  RunTransitionRepository,
  RunFollowupRepository,
  RunUsageRepository,
} from '../runs';
import { ExecutionContextFactory } from './execution-context.factory';
import { ExecutionFence } from './execution-fence';
import { RunExecutor } from './run-executor.service';
import { ExecutionLeases } from './execution-lease';
import { ExecutionEnds } from './execution-ends';
import { ExecutionOutcomes } from './execution-outcome';
import { ExecutionUsage } from './execution-usage';
import { ExecutionApprovals } from './approvals/execution-approvals.service';
import { AgentIdentityRepository, IdentityApprovals } from '../identities';
import { RunBlocking } from './approvals/run-blocking';

const USAGE = { promptTokens: 10, completionTokens: 5, modelCalls: 1 };
const LEASE_MS = 60_000;
const BLOCKED_TIMEOUT_SECONDS = 3600;

/**
 * RunExecutor on a real database (claims, guarded transitions, the fence) with the harness,
 * sandbox and workspace faked: which state a run ends in, with which status, for each way an
 * execution can end (outcome, crash, cancel, lost lease, shutdown).
 */
describe('RunExecutor (database)', () => {
  const db = useTestDatabase('executor');
  const workspaceRoot = mkdtempSync(join(tmpdir(), 'ambient-executor-spec-'));
  let executor: RunExecutor;
  let harnesses: Fake<HarnessRegistry>;
  let sandboxes: Fake<SandboxService>;
  let signals: Fake<RunSignals>;
  let followups: Fake<RunFollowupsService>;
  let transcripts: Fake<TranscriptWriter>;
  /** What the harness of the next execution does with the context it is given. */
  let harnessRun: (context: HarnessContext, signal: AbortSignal) => Promise<HarnessResult>;

  afterAll(() => rmSync(workspaceRoot, { recursive: true, force: true }));

  let config: {
    runs: {
      leaseMs: number;
      maxAttempts: number;
      computeCostPerHourUsd: number;
      blockedTimeoutSeconds: number;
    };
    server: { publicUrl: string; internalApiUrl: null };
    sandbox: { network: 'none' };
  };

  beforeEach(async () => {
    config = {
      runs: {
        leaseMs: LEASE_MS,
        maxAttempts: 3,
        computeCostPerHourUsd: 0,
        blockedTimeoutSeconds: BLOCKED_TIMEOUT_SECONDS,
      },
      server: { publicUrl: 'http://127.0.0.1:1', internalApiUrl: null },
      sandbox: { network: 'none' },
    };
    const built = await newTestService(RunExecutor, [
      { provide: getDataSourceToken(), useValue: db.dataSource },
      { provide: APP_CONFIG, useValue: config },
      RunTransitions,
      RunTransitionRepository,
      RunFollowupRepository,
      RunUsageRepository,
      ExecutionFence,
      RunLookupRepository,
      RunLeaseRepository,
      KeptWorkspaceRepository,
      ExecutionLeases,
      ExecutionOutcomes,
      ExecutionEnds,
      ExecutionUsage,
      ExecutionApprovals,
      RunApprovalRepository,
      AgentIdentityRepository,
      IdentityApprovals,
      RunEventRepository,
      RunAttachmentRepository,
      RunBlocking,
    ]);
    executor = built.sut;
    harnesses = built.fakeOf(HarnessRegistry);
    sandboxes = built.fakeOf(SandboxService);
    signals = built.fakeOf(RunSignals);
    followups = built.fakeOf(RunFollowupsService);

    let contextSignal: AbortSignal = new AbortController().signal;
    const harness: Harness = {
      type: 'oz',
      run: (context) => harnessRun(context, contextSignal),
    } as Harness;
    harnesses.find.mockImplementation((type) => (type === 'nope' ? undefined : harness));
    harnesses.names.mockReturnValue(['oz']);
    const models = built.fakeOf(ModelsService);
    Object.assign(models, { catalog: { defaultModelId: 'fake-model' } });
    models.find.mockReturnValue({ id: 'fake-model' } as never);
    built.fakeOf(RunSecretsService).resolve.mockResolvedValue({ env: {}, skipped: [] } as never);
    built.fakeOf(RunSecretsService).executionConfig.mockResolvedValue({} as never);
    built.fakeOf(WorkspaceSetupService).prepare.mockResolvedValue({ ok: true } as never);
    built.fakeOf(WorkspaceRetentionService).keepUntil.mockReturnValue({} as never);
    Object.assign(built.fakeOf(WorkspaceRetentionService), { volume: 'test-volume' });
    built.fakeOf(WorkspaceService).dirFor.mockImplementation((runId) => join(workspaceRoot, runId));
    sandboxes.select.mockResolvedValue(fake<SelectedSandbox>({ backend: null }));
    built.fakeOf(WorkspaceSetupService).snapshotBeforeOpen.mockResolvedValue(null);
    sandboxes.open.mockResolvedValue(fake<Sandbox>({ close: jest.fn(async () => undefined) }));
    built
      .fakeOf(ExecutionContextFactory)
      .build.mockImplementation(async (_run, _token, _model, signal) => {
        contextSignal = signal;
        return {} as HarnessContext;
      });
    transcripts = built.fakeOf(TranscriptWriter);
    transcripts.keepRawStream.mockResolvedValue(undefined);
    signals.onCancel.mockResolvedValue(() => undefined);
    signals.onFinish.mockResolvedValue(() => undefined);
    followups.hasUndelivered.mockResolvedValue(false);
    harnessRun = async () => ({ outcome: 'succeeded', summary: 'All done.', usage: USAGE });
  });

  const queuedRun = (config: Record<string, unknown> = {}) =>
    insertRun(db.dataSource, db.teamId, { state: 'QUEUED', config, modelId: 'fake-model' });

  it('claims a queued run, runs the harness and ends SUCCEEDED with its answer, lease released', async () => {
    const runId = await queuedRun();
    expect(await executor.execute(runId)).toEqual({ requeue: false });
    expect(await runRow(db.dataSource, runId)).toMatchObject({
      state: 'SUCCEEDED',
      status_message: { message: 'All done.' },
      lease_owner: null,
      execution_count: 1,
    });
    expect(await eventTypes(db.dataSource, runId)).toEqual([
      'oz_run_claimed',
      'agent_started',
      'oz_run_done',
    ]);
    // The oz harness keeps no raw stream: its transcript is rendered from its messages when asked.
    expect(transcripts.keepRawStream).not.toHaveBeenCalled();
  });

  it("keeps a harness's raw stream under its execution before the run ends", async () => {
    harnessRun = async () => ({
      outcome: 'succeeded',
      summary: 'All done.',
      usage: USAGE,
      rawTranscript: '{"cli":"line"}\n',
    });
    const runId = await queuedRun();
    await executor.execute(runId);
    expect(transcripts.keepRawStream).toHaveBeenCalledWith(runId, {
      executionId: 1,
      stream: '{"cli":"line"}\n',
    });
  });

  it.each([
    ['invalid_request', 'FAILED', false],
    ['environment_setup_failed', 'FAILED', false],
    ['resource_unavailable', 'ERROR', true],
    ['authentication_required', 'ERROR', false],
  ] as const)(
    'ends a run whose harness failed with %s in %s (retryable: %s)',
    async (errorCode, state, retryable) => {
      harnessRun = async () => ({
        outcome: 'failed',
        errorCode,
        summary: 'it broke',
        usage: USAGE,
      });
      const runId = await queuedRun();
      await executor.execute(runId);
      expect(await runRow(db.dataSource, runId)).toMatchObject({
        state,
        status_message: { error_code: errorCode, retryable, message: 'it broke' },
        lease_owner: null,
      });
    },
  );

  it('ends a run whose harness crashed in ERROR with internal_error, saying what happened', async () => {
    harnessRun = async () => {
      throw new Error('boom in the harness');
    };
    const runId = await queuedRun();
    await executor.execute(runId);
    expect(await runRow(db.dataSource, runId)).toMatchObject({
      state: 'ERROR',
      status_message: {
        error_code: 'internal_error',
        retryable: true,
        message: expect.stringContaining('boom in the harness'),
      },
      lease_owner: null,
    });
  });

  it('fails a run asking for an unknown harness, or whose sandbox cannot be made, with the reason', async () => {
    const unknown = await queuedRun({ harness: { type: 'nope' } });
    await executor.execute(unknown);
    expect(await runRow(db.dataSource, unknown)).toMatchObject({
      state: 'FAILED',
      status_message: {
        error_code: 'operation_not_supported',
        message: expect.stringContaining('"nope"'),
      },
    });

    sandboxes.open.mockRejectedValue(new SandboxError('image missing', 'environment_setup_failed'));
    const noSandbox = await queuedRun();
    await executor.execute(noSandbox);
    expect(await runRow(db.dataSource, noSandbox)).toMatchObject({
      state: 'FAILED',
      status_message: { error_code: 'environment_setup_failed', message: 'image missing' },
    });
  });

  it("adds the execution's usage to what the run's earlier executions cost", async () => {
    const runId = await queuedRun();
    const earlier = {
      inference_cost: 0.5,
      inference_cost_usd: 0.5,
      compute_cost: 0.25,
      compute_cost_usd: 0.25,
      total_tokens: 100,
      model_token_usage: [
        {
          model_id: 'fake-model',
          total_tokens: 100,
          usage_type: 'custom_endpoint',
          tokens_by_category: { input: 60, output: 40 },
        },
      ],
    };
    await db.dataSource.query('UPDATE runs SET request_usage = ? WHERE id = ?', [
      JSON.stringify(earlier),
      runId,
    ]);
    await executor.execute(runId);
    expect((await runRow(db.dataSource, runId)).request_usage).toEqual({
      ...earlier,
      total_tokens: 115,
      model_token_usage: [
        {
          ...earlier.model_token_usage[0],
          total_tokens: 115,
          tokens_by_category: { input: 70, output: 45 },
        },
      ],
    });
  });

  it('leaves a cancelled run CANCELLED (never SUCCEEDED) and keeps what the execution cost', async () => {
    let cancel: () => void = () => undefined;
    signals.onCancel.mockImplementation(async (_runId, listener) => {
      cancel = listener as () => void;
      return () => undefined;
    });
    const runId = await queuedRun();
    harnessRun = async (_context, signal) => {
      // The API cancels the run (guarded transition), then signals the executing worker.
      await db.dataSource.query(`UPDATE runs SET state = 'CANCELLED' WHERE id = ?`, [runId]);
      cancel();
      expect(signal.aborted).toBe(true);
      return { outcome: 'cancelled', summary: 'stopped', usage: USAGE };
    };
    expect(await executor.execute(runId)).toEqual({ requeue: false });
    const row = await runRow(db.dataSource, runId);
    expect(row.state).toBe('CANCELLED');
    expect(row.request_usage).not.toBeNull();
  });

  it('writes nothing once another worker took the run over (lost lease)', async () => {
    const runId = await queuedRun();
    harnessRun = async () => {
      await db.dataSource.query(
        `UPDATE runs SET execution_count = execution_count + 1, lease_owner = 'other-worker'
          WHERE id = ?`,
        [runId],
      );
      return { outcome: 'succeeded', summary: 'too late', usage: USAGE };
    };
    expect(await executor.execute(runId)).toEqual({ requeue: false });
    expect(await runRow(db.dataSource, runId)).toMatchObject({
      state: 'INPROGRESS',
      lease_owner: 'other-worker',
      execution_count: 2,
      status_message: null,
    });
  });

  it('stops an execution whose lease renewal is refused (taken over), and it writes nothing', async () => {
    config.runs.leaseMs = 600; // renewed every 200 ms
    const runId = await queuedRun();
    let abortReason: unknown;
    harnessRun = async (_context, signal) => {
      await db.dataSource.query(
        `UPDATE runs SET execution_count = execution_count + 1, lease_owner = 'other-worker'
          WHERE id = ?`,
        [runId],
      );
      await aborted(signal, 20_000);
      abortReason = signal.reason;
      return { outcome: 'cancelled', summary: 'stopped', usage: USAGE };
    };
    expect(await executor.execute(runId)).toEqual({ requeue: false });
    expect(abortReason).toBe('lost');
    expect(await runRow(db.dataSource, runId)).toMatchObject({
      state: 'INPROGRESS',
      lease_owner: 'other-worker',
      request_usage: null,
    });
  }, 30_000);

  it('gives the run back to the queue on shutdown without counting the attempt', async () => {
    const runId = await queuedRun();
    harnessRun = async () => {
      executor.abortAll('shutdown');
      return { outcome: 'cancelled', summary: 'shutting down', usage: USAGE };
    };
    await executor.execute(runId);
    expect(await runRow(db.dataSource, runId)).toMatchObject({
      state: 'QUEUED',
      lease_owner: null,
      attempt: 0,
    });
  });

  it('claims only queued runs: a run another worker claimed is not executed twice', async () => {
    const runId = await insertRun(db.dataSource, db.teamId, {
      state: 'CLAIMED',
      executionCount: 1,
      leaseOwner: 'other-worker',
    });
    const harnessCalls = jest.fn();
    harnessRun = async () => {
      harnessCalls();
      return { outcome: 'succeeded', summary: 'twice', usage: USAGE };
    };
    expect(await executor.execute(runId)).toEqual({ requeue: false });
    expect(harnessCalls).not.toHaveBeenCalled();
    expect(await runRow(db.dataSource, runId)).toMatchObject({
      state: 'CLAIMED',
      lease_owner: 'other-worker',
    });
  });

  it('asks to be enqueued again when follow-ups arrived as the run ended', async () => {
    followups.hasUndelivered.mockResolvedValue(true);
    followups.requeueEnded.mockResolvedValue(true);
    const runId = await queuedRun();
    expect(await executor.execute(runId)).toEqual({ requeue: true });
    expect(followups.requeueEnded).toHaveBeenCalledWith(runId, ['SUCCEEDED', 'FAILED', 'ERROR']);
  });
});

/** Resolves when `signal` aborts; fails the spec after `timeoutMs`. */
function aborted(signal: AbortSignal, timeoutMs: number): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`not aborted within ${timeoutMs} ms`)),
      timeoutMs,
    );
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
