import { Injectable, Logger } from '@nestjs/common';
import { ApiError } from '../../../common/errors/api-error';
import { newUuid } from '../../../common/ids';
import { AutomationStore } from '../factories/automation-store.repository';
import { Automation } from '../factories/entities/automation.entity';
import { RunCreationService } from '../../runs';
import type { DeliveryKey } from '../delivery-evaluation.queue';
import { DeliveryLog, DueDelivery } from '../delivery-log.repository';
import { checkTrigger } from '../filter/trigger-check';
import { JsonValue } from '../filter/payload-filter';
import { buildWebhookRun } from './run-envelope';

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
    const delivery = await this.log.dueForEvaluation(entryId);
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
    await this.log.markEvaluated(entryId, new Date());
    return started;
  }

  private async startRun(delivery: DueDelivery, automation: Automation): Promise<string | null> {
    const record = await this.log.claimRun(delivery.id, automation.id, newUuid(), new Date());
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
      await this.log.recordRunRefused(delivery.id, automation.id, err.code, reason);
      return null;
    }
    return record.run_id;
  }
}
