import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { newUid } from '../../common/ids';
import type { JsonObject } from '../../common/json';
import { NotificationDeliveryRepository } from './notification-delivery.repository';
import type { NotificationEvent } from './notification-events';
import { envelope } from './notification-payloads';
import { NotificationQueue } from './notification-queue';
import { TeamEndpoints } from './team-endpoints';

/** `data` of the envelope, or a function making it (called only when an endpoint listens). */
export type NotificationData = JsonObject | ((manager: EntityManager) => Promise<JsonObject>);

/**
 * Records a notification for every enabled endpoint of the team subscribed to `event`, in
 * `manager`'s transaction when given (so it commits, or not, with what it announces), and queues
 * the deliveries after the commit.
 */
@Injectable()
export class NotificationEmitter {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly queue: NotificationQueue,
    private readonly endpoints: TeamEndpoints,
    private readonly deliveries: NotificationDeliveryRepository,
  ) {}

  /** Returns how many deliveries it recorded. */
  async emit(
    teamId: string,
    event: NotificationEvent,
    data: NotificationData,
    manager?: EntityManager,
  ): Promise<number> {
    const record = (m: EntityManager) => this.record(m, teamId, event, data);
    const due = manager ? await record(manager) : await this.dataSource.transaction(record);
    if (due.length) this.queue.afterCommit(manager, due);
    return due.length;
  }

  private async record(
    manager: EntityManager,
    teamId: string,
    event: NotificationEvent,
    data: NotificationData,
  ) {
    const listening = await this.endpoints.listening(teamId, event, manager);
    if (listening.length === 0) return [];
    const now = new Date();
    const payload = envelope(event, typeof data === 'function' ? await data(manager) : data, now);
    const due = [];
    // One INSERT per endpoint: each reads its own id (a team has a handful of endpoints).
    for (const endpoint of listening) {
      const deliveryId = await this.deliveries.insertIfListening(manager, {
        endpointId: endpoint.id,
        messageId: `msg_${newUid()}`,
        event,
        payload,
        status: 'pending',
        attempts: 0,
        nextAttemptAt: now,
        createdAt: now,
      });
      if (deliveryId) due.push({ deliveryId, nextAttemptAt: now });
    }
    return due;
  }
}
