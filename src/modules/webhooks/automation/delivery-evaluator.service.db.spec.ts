import { randomBytes } from 'node:crypto';
import { getDataSourceToken } from '@nestjs/typeorm';
import { ApiError } from '../../../common/errors/api-error';
import { Fake } from '../../../../test/support/unit/fake';
import { newTestService } from '../../../../test/support/unit/new-test-service';
import { useTestDatabase } from '../../../../test/support/unit/test-database';
import { insertWebhook } from '../../../../test/support/unit/webhook-rows';
import { AutomationStore } from '../factories/automation-store.repository';
import { Automation } from '../factories/entities/automation.entity';
import { RunCreationService } from '../../runs';
import { DeliveryLog } from '../delivery-log.repository';
import { PayloadFilter } from '../filter/payload-filter';
import { DeliveryEvaluator } from './delivery-evaluator.service';

const uid = () => randomBytes(11).toString('hex');

/**
 * DeliveryEvaluator on a real database (deliveries, webhooks, factories, the delivery-run
 * records, through the real DeliveryLog) with automations and run creation faked: which runs an accepted delivery starts,
 * once, and what it records when an automation cannot start one.
 */
describe('DeliveryEvaluator (database)', () => {
  const db = useTestDatabase('evaluator');
  let evaluator: DeliveryEvaluator;
  let automations: Fake<AutomationStore>;
  let runs: Fake<RunCreationService>;
  let factoryId: string;
  let webhookId: string;

  beforeAll(async () => {
    ({ factoryId, webhookId } = await insertWebhook(db.dataSource, db.teamId));
  });

  beforeEach(async () => {
    const built = await newTestService(DeliveryEvaluator, [
      { provide: getDataSourceToken(), useValue: db.dataSource },
      DeliveryLog,
    ]);
    evaluator = built.sut;
    automations = built.fakeOf(AutomationStore);
    runs = built.fakeOf(RunCreationService);
    runs.create.mockImplementation(async (input) => ({ id: input.runId }) as never);
  });

  const automation = (name: string, payload: PayloadFilter | null = null): Automation =>
    ({
      id: uid(),
      teamId: db.teamId,
      factoryId,
      name,
      enabled: true,
      agent: null,
      prompt: `Handle it (${name})`,
      triggers: [{ provider: 'webhook', event: 'received', webhook_ids: [webhookId], payload }],
      execution: {},
    }) as unknown as Automation;

  const delivery = async (body: unknown, status = 'accepted'): Promise<string> => {
    const result = (await db.dataSource.query(
      `INSERT INTO webhook_deliveries (webhook_id, delivery_id, status, size_bytes, received_at,
         payload, evaluation_due_at)
       VALUES (?, ?, ?, 10, ?, ?, ?)`,
      [webhookId, uid(), status, new Date(), Buffer.from(JSON.stringify(body)), new Date()],
    )) as { insertId: number };
    return String(result.insertId);
  };
  const evaluationDue = async (entryId: string) =>
    (
      (await db.dataSource.query(`SELECT evaluation_due_at FROM webhook_deliveries WHERE id = ?`, [
        entryId,
      ])) as { evaluation_due_at: Date | null }[]
    )[0].evaluation_due_at !== null;

  it('starts one run per automation whose payload filter matches, and marks the delivery evaluated', async () => {
    const prod = automation('prod deploys', { env: ['prod'] });
    const dev = automation('dev deploys', { env: ['dev'] });
    automations.listeningTo.mockResolvedValue([prod, dev]);
    const entryId = await delivery({ env: 'prod', service: 'api' });

    const started = await evaluator.evaluate(entryId);
    expect(started).toHaveLength(1);
    expect(runs.create).toHaveBeenCalledTimes(1);
    const created = runs.create.mock.calls[0][0];
    expect(created).toMatchObject({ runId: started[0], teamId: db.teamId });
    expect(created.prompt).toContain('Handle it (prod deploys)');
    const attached = created.attachments?.find((a) => a.fileName === 'event-payload.json');
    expect(JSON.parse(attached!.data.toString('utf8'))).toEqual({ env: 'prod', service: 'api' });
    expect(await evaluationDue(entryId)).toBe(false);
  });

  it('starts the same run id when evaluated again after a transient failure (never two runs)', async () => {
    automations.listeningTo.mockResolvedValue([automation('every delivery')]);
    const entryId = await delivery({ env: 'prod' });
    runs.create.mockRejectedValueOnce(
      new Error('Connection lost: the server closed the connection'),
    );
    await expect(evaluator.evaluate(entryId)).rejects.toThrow('Connection lost');
    expect(await evaluationDue(entryId)).toBe(true);
    const firstId = runs.create.mock.calls[0][0].runId;

    expect(await evaluator.evaluate(entryId)).toEqual([firstId]);
    expect(runs.create.mock.calls[1][0].runId).toBe(firstId);
    expect(await evaluator.evaluate(entryId)).toEqual([]);
  });

  it('records why an automation could not start a run, and still starts the others', async () => {
    const broken = automation('broken');
    const fine = automation('fine');
    automations.listeningTo.mockResolvedValue([broken, fine]);
    runs.create.mockImplementation(async (input) => {
      if (input.title?.startsWith('broken')) {
        throw ApiError.invalid('config.model_id', 'unknown model "gone"');
      }
      return { id: input.runId } as never;
    });
    const entryId = await delivery({});

    const started = await evaluator.evaluate(entryId);
    expect(started).toHaveLength(1);
    const records = (await db.dataSource.query(
      `SELECT automation_id, run_id, error_code, error FROM webhook_delivery_runs WHERE delivery_entry_id = ?`,
      [entryId],
    )) as {
      automation_id: string;
      run_id: string | null;
      error_code: string | null;
      error: string | null;
    }[];
    const byAutomation = new Map(records.map((r) => [r.automation_id, r]));
    expect(byAutomation.get(broken.id)).toMatchObject({
      run_id: null,
      error_code: 'invalid_request',
      error: expect.stringContaining('config.model_id: unknown model "gone"'),
    });
    expect(byAutomation.get(fine.id)).toMatchObject({
      run_id: started[0],
      error_code: null,
      error: null,
    });
    expect(await evaluationDue(entryId)).toBe(false);
  });

  it('starts nothing for a rejected delivery, nor for one whose webhook was deleted', async () => {
    automations.listeningTo.mockResolvedValue([automation('every delivery')]);
    const rejected = await delivery({}, 'rejected');
    expect(await evaluator.evaluate(rejected)).toEqual([]);

    const orphan = await delivery({});
    await db.dataSource.query(`UPDATE webhooks SET deleted_at = ? WHERE id = ?`, [
      new Date(),
      webhookId,
    ]);
    try {
      expect(await evaluator.evaluate(orphan)).toEqual([]);
      expect(await evaluationDue(orphan)).toBe(false);
    } finally {
      await db.dataSource.query(`UPDATE webhooks SET deleted_at = NULL WHERE id = ?`, [webhookId]);
    }
    expect(runs.create).not.toHaveBeenCalled();
  });
});
