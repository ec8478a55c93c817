import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, In } from 'typeorm';
import { DeliveryStatus, WebhookDelivery } from './entities/webhook-delivery.entity';
import { WebhookDeliveryKey } from './entities/webhook-delivery-key.entity';
import { WebhookDeliveryRun } from './entities/webhook-delivery-run.entity';
import { isBackingServiceUnavailable } from '../../common/errors/unavailable';
import { isDeadlock } from '../../database/mysql-errors';
import { PackedTransactions } from '../../database/packed-transactions';
import { RawSql, statementOf } from '../../database/raw-sql';

export interface AcceptedOutcome {
  entryId: string;
  duplicate: boolean;
}

/** A delivery that passed every check and is to be committed (or found to be a duplicate). */
export interface AcceptedDelivery {
  webhookId: string;
  deliveryId: string;
  /** What a verified signature covers, as a digest (see `deliveryIdentity`); null unsigned. */
  contentKey: string | null;
  /** The provider's unsigned id and the sender's id, whenever sent (see `deliveryIdentity`). */
  providerKey?: string | null;
  senderKey?: string | null;
  body: Buffer;
  receivedAt: Date;
}

/** An accepted delivery due for evaluation, with its webhook and factory. */
export interface DueDelivery {
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

/** The run a (delivery, automation) pair is to start, or why it started none. */
export interface DeliveryRunRecord {
  run_id: string | null;
  error: string | null;
}

interface InsertResult {
  insertId: number | string;
}

const LOG_COLUMNS = [
  'id',
  'webhookId',
  'deliveryId',
  'status',
  'sizeBytes',
  'receivedAt',
  'evaluatedAt',
  'evaluationDueAt',
  'redeliveryOf',
] as const;

const ACCEPTED_COLUMNS =
  'webhook_id, delivery_id, dedup_key, content_key, status, size_bytes, received_at, payload, evaluation_due_at';
const INSERT_ACCEPTED = `INSERT INTO webhook_deliveries (${ACCEPTED_COLUMNS}) VALUES ?`;

/** An accepted delivery's values, in ACCEPTED_COLUMNS' order. */
function acceptedRow(d: AcceptedDelivery): unknown[] {
  return [
    d.webhookId,
    d.deliveryId,
    d.deliveryId,
    d.contentKey,
    'accepted',
    d.body.length,
    d.receivedAt,
    d.body,
    d.receivedAt,
  ];
}

/** A delivery's keys beside its id and content key: its `webhook_delivery_keys` rows' keys. */
function otherKeys(d: AcceptedDelivery): string[] {
  const keys: string[] = [];
  if (d.providerKey) keys.push(`provider:${d.providerKey}`);
  if (d.senderKey) keys.push(`sender:${d.senderKey}`);
  return keys;
}

/** Each of a delivery's dedup keys, each named with the index that holds it. */
function dedupKeys(d: AcceptedDelivery): string[] {
  const keys = [`id\u0000${d.webhookId}\u0000${d.deliveryId}`];
  if (d.contentKey !== null) keys.push(`content\u0000${d.webhookId}\u0000${d.contentKey}`);
  for (const key of otherKeys(d)) keys.push(`other\u0000${d.webhookId}\u0000${key}`);
  return keys;
}

/**
 * The delivery log. An accepted entry carries its identity in `dedup_key`, for signed deliveries
 * what the signature covers in `content_key`, and the provider's unsigned id and the sender's id,
 * whenever sent, in `webhook_delivery_keys` (each unique per webhook), so the INSERT that commits
 * the delivery is also the dedup decision: of several deliveries sharing any key, even concurrent
 * ones, exactly one row gets in and the others are logged Duplicate.
 */
@Injectable()
export class DeliveryLog {
  /** The ingress's own statements (recordAccepted*), off TypeORM's query runner. */
  private readonly sql: RawSql;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly packed: PackedTransactions,
  ) {
    this.sql = new RawSql(dataSource);
  }

  /**
   * Commits accepted entries: one statement on its own when none carries another key (a signed
   * id, or no id: Standard Webhooks' deliveries, most token ones), else the entries and their keys
   * as one transaction in one packet (START, both INSERTs, COMMIT: no round trip leaves it open
   * between statements, holding the keys' locks). Resolves to the first entry's id when the
   * single statement tells it, else null.
   */
  private async insertAccepted(
    rows: unknown[][],
    accepted: AcceptedDelivery[],
  ): Promise<string | null> {
    const keys = accepted.flatMap((d) =>
      otherKeys(d).map((dedupKey) => ({
        webhookId: d.webhookId,
        dedupKey,
        entryDedupKey: d.deliveryId,
      })),
    );
    if (keys.length === 0) {
      const result = (await this.sql.query(INSERT_ACCEPTED, [rows])) as InsertResult;
      return String(result.insertId);
    }
    await this.packed.run((tx) =>
      tx.add([
        statementOf(INSERT_ACCEPTED, [rows]),
        ...this.sql.insertStatements(WebhookDeliveryKey, keys),
      ]),
    );
    return null;
  }

  async recordAccepted(delivery: AcceptedDelivery): Promise<AcceptedOutcome> {
    const { webhookId, deliveryId, body, receivedAt } = delivery;
    try {
      const entryId =
        (await this.insertAccepted([acceptedRow(delivery)], [delivery])) ??
        (await this.entryIdOf(webhookId, deliveryId));
      return { entryId, duplicate: false };
    } catch (err) {
      if ((err as { code?: string }).code !== 'ER_DUP_ENTRY') throw err;
    }
    const entryId = await this.recordRejected(
      webhookId,
      'duplicate',
      deliveryId,
      body.length,
      receivedAt,
    );
    return { entryId, duplicate: true };
  }

  /**
   * Commits several deliveries in one multi-row INSERT (one commit, all or nothing; with their
   * other keys' INSERT in the same transaction when any carries one). The first of several
   * deliveries in the batch sharing any key is the accepted one, the others are logged Duplicate.
   * When a delivery repeats one committed earlier the batch fails as a whole on a unique key (or,
   * racing another replica's batch, as a deadlock's victim); then each is recorded on its own, in
   * order, which gives the exact outcome for each. Returns, for each delivery, whether it was a
   * duplicate.
   */
  async recordAcceptedMany(deliveries: AcceptedDelivery[]): Promise<boolean[]> {
    const seen = new Set<string>();
    const duplicateInBatch = deliveries.map((d) => {
      const keys = dedupKeys(d);
      if (keys.some((k) => seen.has(k))) return true;
      for (const k of keys) seen.add(k);
      return false;
    });
    const rows = deliveries.map((d, i) =>
      duplicateInBatch[i]
        ? [
            d.webhookId,
            d.deliveryId,
            null,
            null,
            'duplicate',
            d.body.length,
            d.receivedAt,
            null,
            null,
          ]
        : acceptedRow(d),
    );
    try {
      await this.insertAccepted(
        rows,
        deliveries.filter((_, i) => !duplicateInBatch[i]),
      );
      return duplicateInBatch;
    } catch (err) {
      if (isBackingServiceUnavailable(err)) {
        if (await this.committedAnyway(deliveries.filter((_, i) => !duplicateInBatch[i]))) {
          return duplicateInBatch;
        }
        throw err;
      }
      // A deadlock's victim: another replica's batch took some of the same keys in the other
      // order. Nothing of this batch was written; each delivery on its own gets its exact outcome.
      if ((err as { code?: string }).code !== 'ER_DUP_ENTRY' && !isDeadlock(err)) throw err;
    }
    const duplicates: boolean[] = [];
    for (const d of deliveries) {
      // A single row may still meet the other replica's batch once: tried again, then it stands.
      const outcome = await this.recordAccepted(d).catch((err: unknown) => {
        if (!isDeadlock(err)) throw err;
        return this.recordAccepted(d);
      });
      duplicates.push(outcome.duplicate);
    }
    return duplicates;
  }

  private async entryIdOf(webhookId: string, dedupKey: string): Promise<string> {
    const [entry] = (await this.sql.query(
      `SELECT id FROM webhook_deliveries WHERE webhook_id = ? AND dedup_key = ?`,
      [webhookId, dedupKey],
    )) as { id: string | number }[];
    return String(entry.id);
  }

  /**
   * The connection broke during the batch's INSERT — possibly after MySQL committed it but before
   * its answer arrived; a 503 then would be untrue (the delivery is logged and will be evaluated).
   * The statement (or the packed transaction with the keys) is all or nothing, so the batch
   * committed if every one of its deliveries is in the log: its identity with its own arrival time
   * (to the millisecond), so that identities all accepted before (the deliveries were duplicates,
   * and nothing of this batch was written) are not taken for it. The read locks the rows, so it
   * waits for a commit the killed connection's server thread may still be finishing. If MySQL cannot be asked, the error stands.
   */
  private async committedAnyway(deliveries: AcceptedDelivery[]): Promise<boolean> {
    for (let attempt = 0; attempt < 3; attempt += 1) {
      try {
        const rows = (await this.sql.transaction((sql) =>
          sql.query(
            `SELECT COUNT(*) AS n FROM webhook_deliveries
              WHERE (webhook_id, dedup_key, received_at) IN (?) LOCK IN SHARE MODE`,
            [deliveries.map((d) => [d.webhookId, d.deliveryId, d.receivedAt])],
          ),
        )) as { n: number | string }[];
        return Number(rows[0]?.n ?? 0) === deliveries.length;
      } catch {
        // The pool may still hand out a dead connection; the next attempt takes another.
      }
    }
    return false;
  }

  /**
   * Logs a redelivery of an accepted entry: a new accepted entry with the original's payload, due
   * for evaluation, under the delivery id `<original>-redelivery-<n>`. Its own dedup key and no
   * content key, so the original's keys (already taken) do not make it a duplicate; when a
   * concurrent redelivery took the same `n`, the next one is tried.
   */
  async recordRedelivery(
    manager: EntityManager,
    original: WebhookDelivery & { payload: Buffer },
    receivedAt: Date,
  ): Promise<WebhookDelivery> {
    const [{ n }] = (await manager.query(
      `SELECT COUNT(*) AS n FROM webhook_deliveries WHERE redelivery_of = ?`,
      [original.id],
    )) as { n: number | string }[];
    for (let attempt = Number(n) + 1; ; attempt += 1) {
      const deliveryId = redeliveryId(original.deliveryId ?? original.id, attempt);
      try {
        // A duplicate key fails the statement only, not the caller's transaction (InnoDB).
        const result = (await manager.query(
          `INSERT INTO webhook_deliveries
             (webhook_id, delivery_id, dedup_key, redelivery_of, status, size_bytes, received_at, payload, evaluation_due_at)
           VALUES (?, ?, ?, ?, 'accepted', ?, ?, ?, ?)`,
          [
            original.webhookId,
            deliveryId,
            deliveryId,
            original.id,
            original.payload.length,
            receivedAt,
            original.payload,
            receivedAt,
          ],
        )) as InsertResult;
        return manager
          .getRepository(WebhookDelivery)
          .findOneByOrFail({ id: String(result.insertId) });
      } catch (err) {
        if ((err as { code?: string }).code !== 'ER_DUP_ENTRY' || attempt > 1000) throw err;
      }
    }
  }

  /** Entry ids of accepted deliveries, by webhook and delivery id (their unique dedup key). */
  async acceptedEntryIds(keys: { webhookId: string; deliveryId: string }[]): Promise<string[]> {
    if (keys.length === 0) return [];
    const rows = (await this.dataSource.query(
      `SELECT id FROM webhook_deliveries WHERE (webhook_id, dedup_key) IN (?) ORDER BY id`,
      [keys.map((k) => [k.webhookId, k.deliveryId])],
    )) as { id: string | number }[];
    return rows.map((r) => String(r.id));
  }

  /** Logs a delivery that started nothing (duplicates and rejections keep metadata only). */
  async recordRejected(
    webhookId: string,
    status: Exclude<DeliveryStatus, 'accepted'>,
    deliveryId: string | null,
    sizeBytes: number,
    receivedAt: Date,
  ): Promise<string> {
    const result = (await this.dataSource.query(
      `INSERT INTO webhook_deliveries (webhook_id, delivery_id, status, size_bytes, received_at)
       VALUES (?, ?, ?, ?, ?)`,
      [webhookId, deliveryId, status, sizeBytes, receivedAt],
    )) as InsertResult;
    return String(result.insertId);
  }

  /** Newest first; `before` is the last entry id of the previous page. */
  list(webhookId: string, limit: number, before?: string): Promise<WebhookDelivery[]> {
    const query = this.dataSource
      .getRepository(WebhookDelivery)
      .createQueryBuilder('d')
      .select(LOG_COLUMNS.map((c) => `d.${c}`))
      .where('d.webhook_id = :webhookId', { webhookId })
      .orderBy('d.id', 'DESC')
      .take(limit);
    if (before) query.andWhere('d.id < :before', { before });
    return query.getMany();
  }

  get(webhookId: string, entryId: string): Promise<WebhookDelivery | null> {
    return this.dataSource.getRepository(WebhookDelivery).findOneBy({ id: entryId, webhookId });
  }

  runsFor(entryIds: string[]): Promise<WebhookDeliveryRun[]> {
    if (entryIds.length === 0) return Promise.resolve([]);
    return this.dataSource
      .getRepository(WebhookDeliveryRun)
      .find({ where: { deliveryEntryId: In(entryIds) }, order: { createdAt: 'ASC' } });
  }

  /** The accepted delivery `entryId` if it is due for evaluation, with its webhook and factory. */
  async dueForEvaluation(entryId: string): Promise<DueDelivery | null> {
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
    return rows[0] ?? null;
  }

  async markEvaluated(entryId: string, at: Date): Promise<void> {
    await this.dataSource.query(
      `UPDATE webhook_deliveries SET evaluation_due_at = NULL, evaluated_at = ? WHERE id = ?`,
      [at, entryId],
    );
  }

  /**
   * Writes the (delivery, automation) row with the run id to use, unless one is there (an earlier
   * evaluation's), and reads the row back.
   */
  async claimRun(
    entryId: string,
    automationId: string,
    runId: string,
    at: Date,
  ): Promise<DeliveryRunRecord | undefined> {
    await this.dataSource.query(
      `INSERT IGNORE INTO webhook_delivery_runs (delivery_entry_id, automation_id, run_id, created_at)
       VALUES (?, ?, ?, ?)`,
      [entryId, automationId, runId, at],
    );
    const [record] = (await this.dataSource.query(
      `SELECT run_id, error FROM webhook_delivery_runs WHERE delivery_entry_id = ? AND automation_id = ?`,
      [entryId, automationId],
    )) as DeliveryRunRecord[];
    return record;
  }

  /** The automation could start no run for the delivery: the row keeps why, and no run id. */
  async recordRunRefused(
    entryId: string,
    automationId: string,
    code: string,
    reason: string,
  ): Promise<void> {
    await this.dataSource.query(
      `UPDATE webhook_delivery_runs SET run_id = NULL, error_code = ?, error = ?
        WHERE delivery_entry_id = ? AND automation_id = ?`,
      [code, reason, entryId, automationId],
    );
  }

  /** Accepted deliveries whose evaluation was due before `due`, earliest first. */
  async dueBefore(due: Date, limit: number): Promise<string[]> {
    const rows = (await this.dataSource.query(
      `SELECT id FROM webhook_deliveries WHERE evaluation_due_at < ? ORDER BY evaluation_due_at LIMIT ${Number(limit)}`,
      [due],
    )) as { id: string }[];
    return rows.map((row) => String(row.id));
  }

  /**
   * Webhooks that have something to delete: their oldest entry received before `cutoff` and
   * evaluated lies below the boundary (their `keepLatest`-th newest entry, read from
   * (webhook_id, id)), oldest first. A boundary read here and used later can only be older than
   * the current one, which keeps more, never fewer.
   */
  async webhooksWithExpired(
    keepLatest: number,
    cutoff: Date,
    limit: number,
  ): Promise<{ webhookId: string; boundary: string }[]> {
    const rows = (await this.dataSource.query(
      `SELECT s.webhook_id, s.boundary FROM (
         SELECT o.webhook_id, o.oldest,
                (SELECT b.id FROM webhook_deliveries b WHERE b.webhook_id = o.webhook_id
                  ORDER BY b.id DESC LIMIT 1 OFFSET ?) AS boundary
           FROM (SELECT webhook_id, MIN(id) AS oldest FROM webhook_deliveries
                  WHERE received_at < ? AND evaluation_due_at IS NULL GROUP BY webhook_id) o
       ) s
       WHERE s.oldest < s.boundary
       ORDER BY s.oldest LIMIT ?`,
      [keepLatest - 1, cutoff, limit],
    )) as { webhook_id: string; boundary: string }[];
    return rows.map((row) => ({ webhookId: row.webhook_id, boundary: row.boundary }));
  }

  /** Deletes the webhook's evaluated entries below `boundary` received before `cutoff`. */
  async deleteExpired(webhookId: string, boundary: string, cutoff: Date): Promise<number> {
    const result = (await this.dataSource.query(
      `DELETE FROM webhook_deliveries
        WHERE webhook_id = ? AND id < ? AND received_at < ? AND evaluation_due_at IS NULL`,
      [webhookId, boundary, cutoff],
    )) as { affectedRows: number };
    return result.affectedRows;
  }

  /** Deletes every evaluated entry of the webhooks deleted before `cutoff`. */
  async deleteOfWebhooksDeletedBefore(cutoff: Date): Promise<number> {
    const gone = (await this.dataSource.query(
      `DELETE d FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
        WHERE w.deleted_at < ? AND d.evaluation_due_at IS NULL`,
      [cutoff],
    )) as { affectedRows: number };
    return gone.affectedRows;
  }
}

const DELIVERY_ID_MAX = 255;

/** `<original>-redelivery-<n>`, the original id shortened when the whole would not fit. */
function redeliveryId(original: string, n: number): string {
  const suffix = `-redelivery-${n}`;
  return original.slice(0, DELIVERY_ID_MAX - suffix.length) + suffix;
}
