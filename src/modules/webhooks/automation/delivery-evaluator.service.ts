import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ApiError } from '../../../common/errors/api-error';
import { newUuid } from '../../../common/ids';
import { AutomationStore } from '../factories/automation-store.service';
import { Automation } from '../factories/entities/automation.entity';
import { RunCreationService } from '../../runs';
import type { DeliveryKey } from '../delivery-evaluation.queue';
import { DeliveryLog } from '../delivery-log.service';
import { checkTrigger } from '../filter/trigger-check';
import { JsonValue } from '../filter/payload-filter';
import { buildWebhookRun } from './run-envelope';

interface DueDelivery {
  id: string;
  delivery_id: string;
  received_at: Date;
  payload: Buffer;
  webhook_id: string;
  webhook_name: string;
  webhook_deleted_at: Date | null;
  factory_id: string;
  factory_name: string;
  team_id: string;
  created_by: string | null;
  factory_deleted_at: Date | null;
}

interface RunRecord {
  run_id: string | null;
  error: string | null;
}

/**
 * Starts the runs an accepted delivery asks for: one per enabled automation of the webhook's
 * factory whose trigger lists the webhook and whose payload filter matches. Safe to run twice:
 * a (delivery, automation) row is written first with the run id to use, and a run is created
 * with exactly that id, so a repeated evaluation finds the run already there.
 */
@Injectable()
export class DeliveryEvaluator {
  private readonly logger = new Logger('DeliveryEvaluator');

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly automations: AutomationStore,
    private readonly runs: RunCreationService,
    private readonly log: DeliveryLog,
  ) {}

  /** Evaluates each delivery in turn; returns the ids of all the runs they started. */
  async evaluateByKeys(keys: DeliveryKey[]): Promise<string[]> {
    const started: string[] = [];
    for (const entryId of await this.log.acceptedEntryIds(keys)) {
      started.push(...(await this.evaluate(entryId)));
    }
    return started;
  }

  /** Returns the ids of the runs the delivery started (also those started by an earlier try). */
  async evaluate(entryId: string): Promise<string[]> {
    const rows = (await this.dataSource.query(
      `SELECT d.id, d.delivery_id, d.received_at, d.payload, d.webhook_id,
              w.name AS webhook_name, w.deleted_at AS webhook_deleted_at, w.factory_id,
              f.name AS factory_name, f.team_id, f.created_by, f.deleted_at AS factory_deleted_at
         FROM webhook_deliveries d
         JOIN webhooks w ON w.id = d.webhook_id
         JOIN factories f ON f.id = w.factory_id
        WHERE d.id = ? AND d.status = 'accepted' AND d.evaluation_due_at IS NOT NULL`,
      [entryId],
    )) as DueDelivery[];
    const delivery = rows[0];
    if (!delivery) return [];
    const started: string[] = [];
    if (!delivery.webhook_deleted_at && !delivery.factory_deleted_at) {
      const body = JSON.parse(Buffer.from(delivery.payload).toString('utf8')) as JsonValue;
      for (const automation of await this.automations.listeningTo(
        delivery.webhook_id,
        delivery.factory_id,
      )) {
        const matched = automation.triggers.some(
          (t) => checkTrigger(t, delivery.webhook_id, body).matched,
        );
        if (!matched) continue;
        const runId = await this.startRun(delivery, automation);
        if (runId) started.push(runId);
      }
    }
    await this.dataSource.query(
      `UPDATE webhook_deliveries SET evaluation_due_at = NULL, evaluated_at = ? WHERE id = ?`,
      [new Date(), entryId],
    );
    return started;
  }

  private async startRun(delivery: DueDelivery, automation: Automation): Promise<string | null> {
    await this.dataSource.query(
      `INSERT IGNORE INTO webhook_delivery_runs (delivery_entry_id, automation_id, run_id, created_at)
       VALUES (?, ?, ?, ?)`,
      [delivery.id, automation.id, newUuid(), new Date()],
    );
    const [record] = (await this.dataSource.query(
      `SELECT run_id, error FROM webhook_delivery_runs WHERE delivery_entry_id = ? AND automation_id = ?`,
      [delivery.id, automation.id],
    )) as RunRecord[];
    if (!record?.run_id || record.error) return null;
    try {
      await this.runs.create(
        buildWebhookRun({
          runId: record.run_id,
          automation,
          factory: {
            id: delivery.factory_id,
            name: delivery.factory_name,
            teamId: delivery.team_id,
            createdBy: delivery.created_by,
          },
          webhook: { id: delivery.webhook_id, name: delivery.webhook_name },
          delivery: {
            deliveryId: delivery.delivery_id,
            receivedAt: delivery.received_at,
            payload: Buffer.from(delivery.payload),
          },
        }),
      );
    } catch (err) {
      if ((err as { code?: string }).code === 'ER_DUP_ENTRY') return record.run_id; // started before
      if (!(err instanceof ApiError)) throw err; // transient: the sweeper evaluates again
      const reason = `${err.title}: ${err.detail ?? ''}`.slice(0, 1000);
      this.logger.warn(
        `automation ${automation.name} could not start a run for delivery ${delivery.id}: ${reason}`,
      );
      await this.dataSource.query(
        `UPDATE webhook_delivery_runs SET run_id = NULL, error_code = ?, error = ?
          WHERE delivery_entry_id = ? AND automation_id = ?`,
        [err.code, reason, delivery.id, automation.id],
      );
      return null;
    }
    return record.run_id;
  }
}
