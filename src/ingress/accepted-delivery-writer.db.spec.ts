import { getDataSourceToken } from '@nestjs/typeorm';
import { newTestService } from '../../test/support/unit/new-test-service';
import { useTestDatabase } from '../../test/support/unit/test-database';
import { insertWebhook } from '../../test/support/unit/webhook-rows';
import { DeliveryEvaluationQueue } from '../modules/webhooks/delivery-evaluation.queue';
import { MAX_STATEMENT_BYTES } from '../database/raw-sql';
import { DeliveryLog } from '../modules/webhooks/delivery-log.repository';
import { AcceptedDeliveryWriter } from './accepted-delivery-writer';

/** AcceptedDeliveryWriter on a real database: what arrives together is committed together. */
describe('AcceptedDeliveryWriter (database)', () => {
  const db = useTestDatabase('delivery_writer');
  let writer: AcceptedDeliveryWriter;
  let enqueued: { webhookId: string; deliveryId: string }[];
  let webhookId: string;

  beforeAll(async () => {
    ({ webhookId } = await insertWebhook(db.dataSource, db.teamId));
    const built = await newTestService(AcceptedDeliveryWriter, [
      DeliveryLog,
      { provide: getDataSourceToken(), useValue: db.dataSource },
    ]);
    writer = built.sut;
    enqueued = [];
    built.fakeOf(DeliveryEvaluationQueue).enqueueSoon.mockImplementation((keys) => {
      enqueued.push(...keys);
    });
  });

  it('commits forty 250 KB deliveries arriving at once, in statements under the bound', async () => {
    const batches = jest.spyOn(DeliveryLog.prototype, 'recordAcceptedMany');
    const bodies = Array.from({ length: 40 }, (_, i) =>
      Buffer.from(JSON.stringify({ i, pad: 'x'.repeat(250 * 1024) })),
    );
    const outcomes = await Promise.all(
      bodies.map((body, i) =>
        writer.record({
          webhookId,
          deliveryId: `big-${i}`,
          contentKey: null,
          body,
          receivedAt: new Date(),
        }),
      ),
    );
    expect(outcomes.every((o) => !o.duplicate)).toBe(true);
    const rows = (await db.dataSource.query(
      `SELECT delivery_id, LENGTH(payload) AS size FROM webhook_deliveries
       WHERE webhook_id = ? AND status = 'accepted' AND delivery_id LIKE 'big-%'`,
      [webhookId],
    )) as { delivery_id: string; size: string | number }[];
    expect(rows).toHaveLength(40);
    for (const row of rows) {
      expect(Number(row.size)).toBe(bodies[Number(row.delivery_id.slice(4))].length);
    }
    expect(enqueued.filter((k) => k.deliveryId.startsWith('big-'))).toHaveLength(40);
    // Whatever the server's max_allowed_packet: no statement carried more than MAX_STATEMENT_BYTES.
    expect(batches.mock.calls.length).toBeGreaterThan(1);
    for (const [batch] of batches.mock.calls) {
      const bytes = batch.reduce((sum, d) => sum + d.body.length * 2, 0);
      expect(bytes).toBeLessThanOrEqual(MAX_STATEMENT_BYTES);
    }
    batches.mockRestore();
  });
});
