import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { JsonObject } from '../../common/json';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { jsonColumn } from '../../database/json-column';
import { runPageUrl, RunTransitions } from '../runs';
import type { RunState } from '../runs';
import type { NotificationEvent } from './notification-events';
import { NotificationEmitter } from './notification-emitter.service';
import type { RunSummary } from './notification-payloads';

/** The run events of the end states; ERROR (the platform failed the run) is a failure too. */
const EVENT_OF_END: Partial<Record<RunState, NotificationEvent>> = {
  SUCCEEDED: 'run.succeeded',
  FAILED: 'run.failed',
  ERROR: 'run.failed',
  CANCELLED: 'run.cancelled',
};

/**
 * Emits `run.succeeded`, `run.failed` and `run.cancelled` in the transaction that ends the run,
 * so the notification commits with the end or not at all (a crash right after loses nothing).
 */
@Injectable()
export class RunEndNotifications implements OnModuleInit {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly transitions: RunTransitions,
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

  /** `data.run` of the run events (documented in DESIGN "Notifications"). */
  async summary(manager: EntityManager, runId: string): Promise<RunSummary & JsonObject> {
    const [row] = (await manager.query(
      `SELECT id, state, title, status_message, created_at, updated_at FROM runs WHERE id = ?`,
      [runId],
    )) as {
      id: string;
      state: string;
      title: string;
      status_message: string | JsonObject | null;
      created_at: Date;
      updated_at: Date;
    }[];
    return {
      id: row.id,
      state: row.state,
      title: row.title,
      status_message: jsonColumn<JsonObject>(row.status_message),
      session_link: runPageUrl(this.config.server.publicUrl, row.id),
      created_at: row.created_at.toISOString(),
      updated_at: row.updated_at.toISOString(),
    };
  }
}
