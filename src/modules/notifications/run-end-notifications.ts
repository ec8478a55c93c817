import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { JsonObject } from '../../common/json';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { RunLookupRepository, runPageUrl, RunTransitions } from '../runs';
import type { RunState } from '../runs';
import type { NotificationEvent } from './notification-events';
import { NotificationEmitter } from './notification-emitter.service';
import type { RunSummary } from './notification-payloads';

/** The run events of the end states; ERROR (the platform failed the run) is a failure too. */
const EVENT_OF_END: Partial<Record<RunState, NotificationEvent>> = {
  /** Not an end of the run, but of its execution: it waits for a person (approvals). */
  BLOCKED: 'run.blocked',
  SUCCEEDED: 'run.succeeded',
  FAILED: 'run.failed',
  ERROR: 'run.failed',
  CANCELLED: 'run.cancelled',
};

/**
 * Emits `run.succeeded`, `run.failed`, `run.cancelled` and `run.blocked` in the transaction that
 * ends the run (or, for BLOCKED, its execution), so the notification commits with the end or not
 * at all (a crash right after loses nothing).
 */
@Injectable()
export class RunEndNotifications implements OnModuleInit {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly transitions: RunTransitions,
    private readonly runs: RunLookupRepository,
    private readonly emitter: NotificationEmitter,
  ) {}

  onModuleInit(): void {
    this.transitions.onEnded(async (run, manager) => {
      const event = EVENT_OF_END[run.state];
      if (!event) return;
      await this.emitter.emit(
        run.teamId,
        event,
        async (m) => ({ run: await this.summary(m, run.id) }),
        manager,
      );
    });
  }

  /** `data.run` of the run events (docs/api-and-runs.md "Notifications (outgoing webhooks)"). */
  async summary(manager: EntityManager, runId: string): Promise<RunSummary & JsonObject> {
    const run = await this.runs.find(runId, manager);
    if (!run) throw new Error(`run ${runId} ended but cannot be read in its transaction`);
    return {
      id: run.id,
      state: run.state,
      title: run.title,
      status_message: (run.statusMessage as JsonObject | null) ?? null,
      session_link: runPageUrl(this.config.server.publicUrl, run.id),
      created_at: run.createdAt.toISOString(),
      updated_at: run.updatedAt.toISOString(),
    };
  }
}
