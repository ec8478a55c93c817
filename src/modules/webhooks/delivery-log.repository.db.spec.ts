import { TestingModule } from '@nestjs/testing';
import { getDataSourceToken } from '@nestjs/typeorm';
import { newTestService } from '../../../test/support/unit/new-test-service';
import { useTestDatabase } from '../../../test/support/unit/test-database';
import { insertWebhook } from '../../../test/support/unit/webhook-rows';
import { PackedTransactions } from '../../database/packed-transactions';
import { RawSql } from '../../database/raw-sql';
import { DeliveryLog } from './delivery-log.repository';
import { WebhookDelivery } from './entities/webhook-delivery.entity';

/** DeliveryLog on a real database: batches of accepted deliveries, and redeliveries. */
describe('DeliveryLog (database)', () => {
  const db = useTestDatabase('delivery_log');
  let log: DeliveryLog;
  let module: TestingModule;
  let webhookId: string;

  beforeAll(async () => {
    ({ webhookId } = await insertWebhook(db.dataSource, db.teamId));
    ({ sut: log, module } = await newTestService(DeliveryLog, [
      { provide: getDataSourceToken(), useValue: db.dataSource },
      PackedTransactions,
    ]));
  });

  afterAll(() => module.close());

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

  it("records a batch delivery by delivery when it was a deadlock's victim, a row tried once more", async () => {
    await accepted('dl-0');
    const deadlock = () =>
      Object.assign(new Error('Deadlock found when trying to get lock'), {
        code: 'ER_LOCK_DEADLOCK',
      });
    const query = jest.spyOn(RawSql.prototype, 'query');
    // The batch, then the first row on its own: each a deadlock's victim once.
    query.mockRejectedValueOnce(deadlock()).mockRejectedValueOnce(deadlock());
    try {
      const delivery = (deliveryId: string) => ({
        webhookId,
        deliveryId,
        contentKey: null,
        body: Buffer.from(`{"id":"${deliveryId}"}`),
        receivedAt: new Date(),
      });
      const duplicates = await log.recordAcceptedMany(
        ['dl-1', 'dl-0', 'dl-2'].map((id) => delivery(id)),
      );
      expect(duplicates).toEqual([false, true, false]);
    } finally {
      query.mockRestore();
    }
    const rows = (await db.dataSource.query(
      `SELECT delivery_id, status FROM webhook_deliveries
       WHERE webhook_id = ? AND delivery_id LIKE 'dl-%' ORDER BY id`,
      [webhookId],
    )) as { delivery_id: string; status: string }[];
    expect(rows).toEqual([
      { delivery_id: 'dl-0', status: 'accepted' },
      { delivery_id: 'dl-1', status: 'accepted' },
      { delivery_id: 'dl-0', status: 'duplicate' },
      { delivery_id: 'dl-2', status: 'accepted' },
    ]);
  });

  describe('a delivery is a duplicate when any of its ids was accepted before', () => {
    const delivery = (
      deliveryId: string,
      keys: { providerKey?: string; senderKey?: string; contentKey?: string } = {},
    ) => ({
      webhookId,
      deliveryId,
      contentKey: keys.contentKey ?? null,
      providerKey: keys.providerKey ?? null,
      senderKey: keys.senderKey ?? null,
      body: Buffer.from(`{"id":"${deliveryId}"}`),
      receivedAt: new Date(),
    });
    const statuses = async (prefix: string) =>
      (await db.dataSource.query(
        `SELECT delivery_id, status FROM webhook_deliveries
          WHERE webhook_id = ? AND delivery_id LIKE ? ORDER BY id`,
        [webhookId, `${prefix}%`],
      )) as { delivery_id: string; status: string }[];

    it('on its own: the provider id or the sender id under another configured id, and back', async () => {
      const first = delivery('ka-c1', { providerKey: 'ka-gh-1', senderKey: 'ka-s-1' });
      expect((await log.recordAccepted(first)).duplicate).toBe(false);
      // The same provider id under a new configured id; the same sender id alone.
      const sameProvider = delivery('ka-c2', { providerKey: 'ka-gh-1' });
      expect((await log.recordAccepted(sameProvider)).duplicate).toBe(true);
      const sameSender = delivery('ka-s-1', { senderKey: 'ka-s-1' });
      expect((await log.recordAccepted(sameSender)).duplicate).toBe(true);
      // The configured id again with new other ids: the seed's order still holds.
      const sameConfigured = delivery('ka-c1', { providerKey: 'ka-gh-2', senderKey: 'ka-s-2' });
      expect((await log.recordAccepted(sameConfigured)).duplicate).toBe(true);
      const fresh = delivery('ka-c3', { providerKey: 'ka-gh-3', senderKey: 'ka-s-3' });
      expect((await log.recordAccepted(fresh)).duplicate).toBe(false);
      expect((await statuses('ka-')).map((r) => r.status)).toEqual([
        'accepted',
        'duplicate',
        'duplicate',
        'duplicate',
        'accepted',
      ]);
    });

    it('in one batch, and against what an earlier batch accepted', async () => {
      const first = await log.recordAcceptedMany([
        delivery('kb-c1', { providerKey: 'kb-gh-1', senderKey: 'kb-s-1' }),
        delivery('kb-c2', { providerKey: 'kb-gh-1' }),
        delivery('kb-c3', { senderKey: 'kb-s-1' }),
        delivery('kb-c4', { providerKey: 'kb-gh-4', senderKey: 'kb-s-4' }),
      ]);
      expect(first).toEqual([false, true, true, false]);
      const second = await log.recordAcceptedMany([
        delivery('kb-c5', { senderKey: 'kb-s-4' }),
        delivery('kb-gh-1', { providerKey: 'kb-gh-1' }),
        delivery('kb-c6', { providerKey: 'kb-gh-6', senderKey: 'kb-s-6' }),
      ]);
      expect(second).toEqual([true, true, false]);
      const accepted = (await statuses('kb-')).filter((r) => r.status === 'accepted');
      expect(accepted.map((r) => r.delivery_id)).toEqual(['kb-c1', 'kb-c4', 'kb-c6']);
    });
    it('go with their entry: once the retention removed it, its ids are free again', async () => {
      const old = new Date(Date.now() - 86_400_000);
      const entry = { ...delivery('kc-c1', { providerKey: 'kc-gh-1' }), receivedAt: old };
      const { entryId } = await log.recordAccepted(entry);
      await db.dataSource.query(
        `UPDATE webhook_deliveries SET evaluation_due_at = NULL WHERE id = ?`,
        [entryId],
      );
      const cutoff = new Date(old.getTime() + 1);
      expect(await log.deleteExpired(webhookId, String(Number(entryId) + 1), cutoff)).toBe(1);
      const keys = (await db.dataSource.query(
        `SELECT dedup_key FROM webhook_delivery_keys WHERE webhook_id = ? AND entry_dedup_key = 'kc-c1'`,
        [webhookId],
      )) as unknown[];
      expect(keys).toEqual([]);
      expect(
        (await log.recordAccepted(delivery('kc-c2', { providerKey: 'kc-gh-1' }))).duplicate,
      ).toBe(false);
    });
  });

  describe('a batch whose connection broke', () => {
    const connectionLost = () =>
      Object.assign(new Error('Connection lost: The server closed the connection.'), {
        code: 'PROTOCOL_CONNECTION_LOST',
      });
    const batch = (ids: string[], receivedAt: Date) =>
      ids.map((deliveryId) => ({
        webhookId,
        deliveryId,
        contentKey: null,
        body: Buffer.from(`{"id":"${deliveryId}"}`),
        receivedAt,
      }));

    it('is taken as accepted when it committed before the answer was lost', async () => {
      const query = jest.spyOn(RawSql.prototype, 'query');
      const run = query.getMockImplementation() ?? RawSql.prototype.query;
      query.mockImplementationOnce(async function (this: RawSql, ...args) {
        await run.apply(this, args);
        throw connectionLost();
      });
      try {
        await expect(
          log.recordAcceptedMany(batch(['lc-1', 'lc-2'], new Date('2026-12-07T10:00:00.123Z'))),
        ).resolves.toEqual([false, false]);
      } finally {
        query.mockRestore();
      }
    });

    it('with other keys (one packed transaction): accepted when it committed, keys and all', async () => {
      const run = jest.spyOn(PackedTransactions.prototype, 'run');
      const real = run.getMockImplementation() ?? PackedTransactions.prototype.run;
      run.mockImplementationOnce(async function (this: PackedTransactions, ...args) {
        await real.apply(this, args);
        throw connectionLost();
      });
      const keyed = batch(['lc-5', 'lc-6'], new Date('2026-12-07T10:00:01.000Z')).map((d) => ({
        ...d,
        senderKey: `s-${d.deliveryId}`,
      }));
      try {
        await expect(log.recordAcceptedMany(keyed)).resolves.toEqual([false, false]);
      } finally {
        run.mockRestore();
      }
      // Its keys committed with it: the sender ids alone are duplicates now.
      const again = keyed.map((d) => ({ ...d, deliveryId: `${d.deliveryId}-again` }));
      await expect(log.recordAcceptedMany(again)).resolves.toEqual([true, true]);
    });

    it('with other keys: fails when nothing committed, and leaves no key behind', async () => {
      const run = jest.spyOn(PackedTransactions.prototype, 'run');
      const real = run.getMockImplementation() ?? PackedTransactions.prototype.run;
      // The packet never reaches COMMIT: the statements are held, then the connection is lost.
      run.mockImplementationOnce(function (this: PackedTransactions, work) {
        return real.call(this, async (tx) => {
          await work(tx);
          throw connectionLost();
        });
      });
      const keyed = batch(['lc-7'], new Date('2026-12-07T10:00:02.000Z')).map((d) => ({
        ...d,
        providerKey: 'gh-lc-7',
      }));
      try {
        await expect(log.recordAcceptedMany(keyed)).rejects.toMatchObject({
          code: 'PROTOCOL_CONNECTION_LOST',
        });
      } finally {
        run.mockRestore();
      }
      await expect(log.recordAcceptedMany(keyed)).resolves.toEqual([false]);
    });

    it('fails when it did not commit, even though each identity was accepted before', async () => {
      await log.recordAcceptedMany(batch(['lc-3', 'lc-4'], new Date('2026-12-07T10:00:00.000Z')));
      const query = jest.spyOn(RawSql.prototype, 'query');
      query.mockRejectedValueOnce(connectionLost());
      try {
        await expect(
          log.recordAcceptedMany(batch(['lc-3', 'lc-4'], new Date('2026-12-07T10:00:05.000Z'))),
        ).rejects.toMatchObject({ code: 'PROTOCOL_CONNECTION_LOST' });
      } finally {
        query.mockRestore();
      }
      const [{ n }] = (await db.dataSource.query(
        `SELECT COUNT(*) AS n FROM webhook_deliveries WHERE webhook_id = ? AND delivery_id IN ('lc-3', 'lc-4')`,
        [webhookId],
      )) as { n: string | number }[];
      expect(Number(n)).toBe(2);
    });
  });

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
