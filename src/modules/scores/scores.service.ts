import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ApiError } from '../../common/errors/api-error';
import { newUuid } from '../../common/ids';
import { AuditLog } from '../audit';
import {
  contentDeletedConflict,
  Run,
  RunCreationService,
  RunKeysService,
  RunLookupRepository,
} from '../runs';
import type { Principal } from '../../common/auth/principal';
import { judgePrompt } from './judge-prompt';
import { RunScore } from './run-score.entity';
import { ScoresRepository } from './scores.repository';
import { checkVerdict, Verdict } from './verdict';

export interface VerdictResult {
  index: number;
  accepted: boolean;
  criterion?: string;
  error?: string;
}

/** Judge runs and the scores they report about the run they judge. */
@Injectable()
export class ScoresService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly creation: RunCreationService,
    private readonly runs: RunLookupRepository,
    private readonly audit: AuditLog,
    private readonly scores: ScoresRepository,
  ) {}

  /** Starts a judge run for a run of the caller's team; its run-scoped key may report scores. */
  async dispatchJudge(
    principal: Principal,
    targetRunId: string,
    input: { prompt: string; title?: string },
  ): Promise<Run> {
    const target = await this.runs.findOfTeam(targetRunId, principal.teamId);
    if (!target) throw ApiError.notFound(`run ${targetRunId}`);
    if (target.contentDeletedAt) {
      throw contentDeletedConflict(
        `run ${target.id}: its conversation`,
        'a judge would have nothing to score',
      );
    }
    const runId = newUuid();
    const judge = await this.creation.create({
      runId,
      teamId: principal.teamId,
      creatorId: principal.userId,
      source: 'RUN_SCORER',
      title: input.title ?? `Score run ${target.id}`,
      prompt: judgePrompt(target, input.prompt),
      auditBy: principal,
    });
    await this.scores.addJudge({
      judgeRunId: judge.id,
      targetRunId: target.id,
      teamId: target.teamId,
      createdAt: new Date(),
    });
    return judge;
  }

  /**
   * Stores the verdicts of a judge's live execution about its target run. Each verdict is
   * checked on its own; the accepted ones are stored and the result says which were refused.
   */
  async report(
    principal: Principal,
    targetRunId: string,
    verdicts: unknown[],
  ): Promise<VerdictResult[]> {
    const target = { type: 'run', id: targetRunId };
    await this.audit.deniedOn(principal, 'score.report', target, () =>
      this.assertJudge(principal, targetRunId),
    );
    const results: VerdictResult[] = [];
    const accepted: Verdict[] = [];
    verdicts.forEach((raw, index) => {
      const check = checkVerdict(raw);
      if ('error' in check) {
        const criterion = (raw as { criterion?: unknown } | null)?.criterion;
        results.push({
          index,
          accepted: false,
          ...(typeof criterion === 'string' ? { criterion } : {}),
          error: check.error,
        });
      } else {
        accepted.push(check.verdict);
        results.push({ index, accepted: true, criterion: check.verdict.criterion });
      }
    });
    if (accepted.length > 0) {
      const now = new Date();
      await this.dataSource.transaction(async (manager) => {
        await this.scores.addScores(
          manager,
          accepted.map((v) => ({
            ...v,
            targetRunId,
            judgeRunId: principal.runId!,
            teamId: principal.teamId,
            createdAt: now,
          })),
        );
        await this.audit.record(manager, principal, 'score.report', target, {
          criteria: accepted.map((v) => v.criterion),
        });
      });
    }
    return results;
  }

  /** The scores of a run of the caller's team, most recent first. */
  async list(teamId: string, runId: string): Promise<RunScore[]> {
    if (!(await this.runs.exists(runId, teamId))) throw ApiError.notFound(`run ${runId}`);
    return this.scores.scoresOf(teamId, runId);
  }

  /** The key must be a judge's of this run, and that judge's execution must still be running. */
  private async assertJudge(principal: Principal, targetRunId: string): Promise<void> {
    const judge = principal.runId ? await this.scores.judgeOf(principal.runId) : null;
    if (!judge || judge.targetRunId !== targetRunId) {
      throw new ApiError(
        'not_authorized',
        `this key is not the key of a judge of run ${targetRunId}`,
      );
    }
    const run = await this.runs.find(judge.judgeRunId);
    const live =
      run &&
      (RunKeysService.isServiceExecutionKey(run, principal.runExecutionId) ||
        run.leaseOwner === RunKeysService.leaseOwnerFor(principal.keyId));
    if (!live) {
      throw new ApiError(
        'not_authorized',
        `the judge execution of this key has ended (run ${judge.judgeRunId} is ${run?.state})`,
      );
    }
  }
}
