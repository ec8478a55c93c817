import { Inject, Injectable, Optional } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, In, IsNull } from 'typeorm';
import type { InvalidationBus } from '../../common/cache/broadcast-cache';
import { Invalidations } from '../../common/cache/invalidations';
import { Webhook } from './entities/webhook.entity';

/** What the ingress needs to know about a live, enabled webhook. */
export interface IngressWebhook {
  id: string;
  teamId: string;
  authMode: Webhook['authMode'];
  signatureScheme: Webhook['signatureScheme'];
  secretCiphertext: Buffer;
  deliveryIdHeader: string | null;
}

interface IngressRow {
  id: string;
  team_id: string;
  auth_mode: Webhook['authMode'];
  signature_scheme: Webhook['signatureScheme'];
  secret_ciphertext: Buffer;
  delivery_id_header: string | null;
}

/** Invalidation topic of a webhook row, by id: the ingress's cached lookups drop it. */
export const WEBHOOK_TOPIC = 'webhook';

/**
 * Webhook rows. Deleting is soft: automations keep selecting a deleted UID (it never fires).
 * Every update (disable, rotate, …) and deletion is announced to every replica's ingress cache
 * when its transaction commits.
 */
@Injectable()
export class WebhookStore {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Optional() @Inject(Invalidations) private readonly invalidations?: InvalidationBus,
  ) {}

  /**
   * The webhooks deliveries are for, in the order asked, null where a webhook is unknown,
   * disabled or deleted. One query for many lookups: the ingress coalesces concurrent ones.
   */
  async findForIngress(ids: string[]): Promise<(IngressWebhook | null)[]> {
    const rows = (await this.dataSource.query(
      `SELECT id, team_id, auth_mode, signature_scheme, secret_ciphertext, delivery_id_header
         FROM webhooks WHERE id IN (?) AND enabled = 1 AND deleted_at IS NULL`,
      [ids],
    )) as IngressRow[];
    const byId = new Map(rows.map((row) => [row.id, row]));
    return ids.map((id) => {
      const row = byId.get(id);
      if (!row) return null;
      return {
        id: row.id,
        teamId: row.team_id,
        authMode: row.auth_mode,
        signatureScheme: row.signature_scheme,
        secretCiphertext: Buffer.from(row.secret_ciphertext),
        deliveryIdHeader: row.delivery_id_header,
      };
    });
  }

  listLive(factoryId: string, manager?: EntityManager): Promise<Webhook[]> {
    return (manager ?? this.dataSource.manager)
      .getRepository(Webhook)
      .find({ where: { factoryId, deletedAt: IsNull() }, order: { name: 'ASC' } });
  }

  /** Every webhook the factory ever had, deleted ones included (UIDs stay referable). */
  listAll(factoryId: string, manager: EntityManager): Promise<Webhook[]> {
    return manager.getRepository(Webhook).find({ where: { factoryId } });
  }

  findLive(factoryId: string, id: string, manager?: EntityManager): Promise<Webhook | null> {
    return (manager ?? this.dataSource.manager)
      .getRepository(Webhook)
      .findOneBy({ id, factoryId, deletedAt: IsNull() });
  }

  async insert(manager: EntityManager, webhook: Webhook): Promise<void> {
    await manager.getRepository(Webhook).insert(webhook);
  }

  async update(manager: EntityManager, id: string, fields: Partial<Webhook>): Promise<void> {
    await manager.getRepository(Webhook).update({ id }, { ...fields, updatedAt: new Date() });
    await this.invalidations?.changed(manager, WEBHOOK_TOPIC, [id]);
  }

  async softDelete(manager: EntityManager, ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    const now = new Date();
    await manager
      .getRepository(Webhook)
      .update(
        { id: In(ids), deletedAt: IsNull() },
        { deletedAt: now, enabled: false, updatedAt: now },
      );
    await this.invalidations?.changed(manager, WEBHOOK_TOPIC, ids);
  }

  /** Names of live webhooks that snapshot the team secret `name` (it may not be deleted). */
  async usingSecret(teamId: string, name: string, manager: EntityManager): Promise<Webhook[]> {
    return manager.getRepository(Webhook).findBy({ teamId, secretName: name, deletedAt: IsNull() });
  }
}
