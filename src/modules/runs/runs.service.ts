import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ApiError } from '../../common/errors/api-error';
import { RunArtifactRepository } from '../artifacts';
import { AuditLog } from '../audit';
import type { Principal } from '../../common/auth/principal';
import { TeamsService } from '../teams';
import { RunItemDto, TimelineEventDto } from './dto/run-item.dto';
import { Run } from './entities/run.entity';
import { isCancellableType, toRunItem, toTimelineEvent } from './run-item.mapper';
import { RunListParams } from './run-list.params';
import { RunEventRepository } from './run-event.repository';
import { RunListQuery } from './run-list.repository';
import { RunLookupRepository } from './run-lookup.repository';
import { isTerminal } from './run-state';
import { deciderOf, RunApprovalRequests } from './run-approval-requests';
import { RunQueue } from './run-queue.service';
import { RunSignals } from './run-signals.service';
import { RunTransitions } from './run-transitions.service';
import { contentDeletedError } from './run-content.repository';

/** Reads and steers runs on behalf of a team. Every lookup is scoped to the caller's team. */
@Injectable()
export class RunsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly lookups: RunLookupRepository,
    private readonly events: RunEventRepository,
    private readonly teams: TeamsService,
    private readonly artifacts: RunArtifactRepository,
    private readonly listQuery: RunListQuery,
    private readonly transitions: RunTransitions,
    private readonly queue: RunQueue,
    private readonly signals: RunSignals,
    private readonly audit: AuditLog,
    private readonly approvals: RunApprovalRequests,
  ) {}

  async findVisible(teamId: string, runId: string): Promise<Run> {
    const run = await this.lookups.findOfTeam(runId, teamId);
    if (!run) throw ApiError.notFound(`run "${runId}"`);
    return run;
  }

  async getItem(teamId: string, runId: string): Promise<RunItemDto> {
    const [item] = await this.toItems(teamId, [await this.findVisible(teamId, runId)]);
    return item;
  }

  async list(
    teamId: string,
    params: RunListParams,
  ): Promise<{ runs: RunItemDto[]; nextCursor: string | null }> {
    const { runs, nextCursor } = await this.listQuery.list(teamId, params);
    return { runs: await this.toItems(teamId, runs), nextCursor };
  }

  /** RunItems with their people and artifacts, loaded with one query each for the whole page. */
  async toItems(teamId: string, runs: Run[]): Promise<RunItemDto[]> {
    if (runs.length === 0) return [];
    const userIds = runs
      .flatMap((r) => [r.creatorId, r.executorId])
      .filter((id): id is string => !!id);
    const [users, artifacts] = await Promise.all([
      this.teams.usersByIds(teamId, userIds),
      this.artifacts.forRuns(runs.map((r) => r.id)),
    ]);
    const now = new Date();
    return runs.map((run) =>
      toRunItem(run, {
        users,
        artifacts: artifacts.get(run.id) ?? [],
        now,
        publicUrl: this.config.server.publicUrl,
      }),
    );
  }

  /**
   * Cancels a run: a queued run ends CANCELLED at once; a running one is marked CANCELLED and
   * its worker, signalled over Redis (or at its next lease renewal), aborts the harness. A BLOCKED
   * run ends CANCELLED at once too, its pending requests denied (nothing runs to be signalled).
   */
  async cancel(principal: Principal, runId: string): Promise<void> {
    const { teamId, displayName: cancelledBy } = principal;
    for (let attempt = 0; attempt < 3; attempt++) {
      const run = await this.findVisible(teamId, runId);
      if (!isCancellableType(run)) {
        throw new ApiError(
          'operation_not_supported',
          `runs of source ${run.source} (${run.executionLocation}) cannot be cancelled from here`,
        );
      }
      // A BLOCKED run waits for a person with nothing running: cancelling it ends it at once
      // (Oz answers 400 for BLOCKED; Ambient lets a person who will not decide end the run).
      if (isTerminal(run.state) && run.state !== 'BLOCKED') {
        throw new ApiError('invalid_request', `the run is already ${run.state}`);
      }
      if (run.state === 'PENDING') {
        throw new ApiError('conflict', 'the run is being prepared; retry after a moment', {
          title: 'Pending agent runs cannot be cancelled, retry after a moment.',
          headers: { 'Retry-After': '1' },
        });
      }
      const cancelled = await this.dataSource.transaction(async (manager) => {
        const applied = await this.transitions.transition(
          runId,
          'CANCELLED',
          {
            from: [run.state],
            set: {
              finishedAt: new Date(),
              leaseOwner: null,
              leaseExpiresAt: null,
              statusMessage: { message: `Cancelled by ${cancelledBy}` },
            },
            event: { payload: { cancelled_by: cancelledBy, previous_state: run.state } },
          },
          manager,
        );
        if (applied && run.state === 'BLOCKED') {
          await this.approvals.decidePending(manager, runId, () => ({
            decision: 'deny',
            comment: `the run was cancelled by ${cancelledBy}`,
            by: deciderOf(principal),
          }));
        }
        if (applied) {
          await this.audit.record(
            manager,
            principal,
            'run.cancel',
            { type: 'run', id: runId },
            {
              previous_state: run.state,
            },
          );
        }
        return applied;
      });
      if (cancelled) {
        if (run.state === 'QUEUED') await this.queue.remove(runId).catch(() => undefined);
        else if (run.state !== 'BLOCKED') await this.signals.publishCancel(runId);
        return;
      }
      // The run moved between our read and our update; decide again on its new state.
    }
    throw new ApiError('conflict', 'the run is changing state; retry after a moment');
  }

  async timeline(teamId: string, runId: string): Promise<TimelineEventDto[]> {
    const run = await this.findVisible(teamId, runId);
    if (run.contentDeletedAt) throw contentDeletedError(run, 'timeline');
    const events = await this.events.timeline(runId);
    return events.map(toTimelineEvent);
  }

  async runIdByExternalReference(teamId: string, url: string): Promise<string> {
    const runId = await this.artifacts.runIdForUrl(teamId, url);
    if (!runId) throw ApiError.notFound('run for that external reference');
    return runId;
  }
}
