import { getDataSourceToken } from '@nestjs/typeorm';
import { newTestService } from '../../../test/support/unit/new-test-service';
import { useTestDatabase } from '../../../test/support/unit/test-database';
import { insertWebhook } from '../../../test/support/unit/webhook-rows';
import { DeliveryLog } from './delivery-log.repository';
import { WebhookDelivery } from './entities/webhook-delivery.entity';

/** DeliveryLog.recordRedelivery on a real database: the new entry, its id, its link. */
describe('DeliveryLog.recordRedelivery (database)', () => {
  const db = useTestDatabase('delivery_log');
  let log: DeliveryLog;
  let webhookId: string;

  beforeAll(async () => {
    ({ webhookId } = await insertWebhook(db.dataSource, db.teamId));
    log = (
      await newTestService(DeliveryLog, [
        { provide: getDataSourceToken(), useValue: db.dataSource },
      ])
    ).sut;
  });

  async function accepted(deliveryId: string, body = '{"a":1}') {
    const { entryId } = await log.recordAccepted({
      webhookId,
      deliveryId,
      contentKey: null,
      body: Buffer.from(body),
      receivedAt: new Date(),
    });
    return (await log.get(webhookId, entryId)) as WebhookDelivery & { payload: Buffer };
  }

  const redeliver = (original: WebhookDelivery & { payload: Buffer }) =>
    db.dataSource.transaction((manager) => log.recordRedelivery(manager, original, new Date()));

  it('logs an accepted, due entry with the same payload, linked to the original', async () => {
    const original = await accepted('d-1', '{"event":"deploy"}');
    const entry = await redeliver(original);
    expect(entry).toMatchObject({
      webhookId,
      deliveryId: 'd-1-redelivery-1',
      dedupKey: 'd-1-redelivery-1',
      contentKey: null,
      redeliveryOf: original.id,
      status: 'accepted',
      sizeBytes: original.payload.length,
      evaluatedAt: null,
    });
    expect(entry.evaluationDueAt).not.toBeNull();
    expect(Buffer.from(entry.payload!).equals(original.payload)).toBe(true);
    expect((await redeliver(original)).deliveryId).toBe('d-1-redelivery-2');
  });

  it('skips an id a sender already used, in the same transaction', async () => {
    const original = await accepted('d-2');
    await accepted('d-2-redelivery-1');
    const entry = await redeliver(original);
    expect(entry.deliveryId).toBe('d-2-redelivery-2');
  });

  it('shortens a long original id so the new one fits the column', async () => {
    const original = await accepted('x'.repeat(255));
    const entry = await redeliver(original);
    expect(entry.deliveryId).toHaveLength(255);
    expect(entry.deliveryId!.endsWith('x-redelivery-1')).toBe(true);
  });
});
