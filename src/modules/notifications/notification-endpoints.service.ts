import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { Principal } from '../../common/auth/principal';
import { EgressGuard } from '../../common/egress/egress-guard';
import { ApiError } from '../../common/errors/api-error';
import { newUid, UID_PATTERN } from '../../common/ids';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { AuditLog } from '../audit';
import { SecretCipher } from '../secrets';
import type {
  CreateNotificationEndpointDto,
  UpdateNotificationEndpointDto,
} from './dto/notification-endpoint.dto';
import { endpointUrlProblem } from './endpoint-url';
import { NotificationDelivery } from './entities/notification-delivery.entity';
import { NotificationEndpoint } from './entities/notification-endpoint.entity';
import { NotificationDeliveryRepository } from './notification-delivery.repository';
import { NotificationEndpointRepository } from './notification-endpoint.repository';
import { NotificationQueue } from './notification-queue';
import { TeamEndpoints } from './team-endpoints';

/** A team has at most this many endpoints (each end of a run writes one row per endpoint). */
export const MAX_ENDPOINTS_PER_TEAM = 20;

export interface EndpointWithSecret {
  endpoint: NotificationEndpoint;
  secret: string;
}

/** A new Standard Webhooks signing secret: `whsec_` and 256 random bits in base64. */
function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** The admin API of a team's notification endpoints; every change is audited with it. */
@Injectable()
export class NotificationEndpoints {
  private readonly guard: EgressGuard;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly endpoints: NotificationEndpointRepository,
    private readonly deliveryLog: NotificationDeliveryRepository,
    private readonly cipher: SecretCipher,
    private readonly audit: AuditLog,
    private readonly queue: NotificationQueue,
    private readonly teamEndpoints: TeamEndpoints,
  ) {
    this.guard = EgressGuard.fromSetting(config.egress.allow);
  }

  async create(
    principal: Principal,
    dto: CreateNotificationEndpointDto,
  ): Promise<EndpointWithSecret> {
    await this.assertUrl(dto.url);
    const secret = newSigningSecret();
    const now = new Date();
    const endpoint: NotificationEndpoint = {
      id: newUid(),
      teamId: principal.teamId,
      url: dto.url,
      events: dto.events,
      format: dto.format ?? 'standard',
      enabled: dto.enabled ?? true,
      secretCiphertext: this.cipher.encrypt(secret, principal.teamId),
      secretUpdatedAt: now,
      createdAt: now,
      updatedAt: now,
    };
    await this.dataSource.transaction(async (manager) => {
      const count = await this.endpoints.countOfTeamLocked(manager, principal.teamId);
      if (count >= MAX_ENDPOINTS_PER_TEAM) {
        throw new ApiError(
          'conflict',
          `a team has at most ${MAX_ENDPOINTS_PER_TEAM} notification endpoints: delete one first`,
          { retryable: false },
        );
      }
      await this.endpoints.insert(manager, endpoint);
      await this.teamEndpoints.changed(manager, endpoint.teamId);
      await this.audit.record(
        manager,
        principal,
        'notification_endpoint.create',
        target(endpoint),
        {
          url_host: hostOf(endpoint.url),
          events: endpoint.events,
          format: endpoint.format,
          enabled: endpoint.enabled,
        },
      );
    });
    return { endpoint, secret };
  }

  list(principal: Principal): Promise<NotificationEndpoint[]> {
    return this.endpoints.listOfTeam(principal.teamId);
  }

  async get(principal: Principal, id: string): Promise<NotificationEndpoint> {
    const endpoint = UID_PATTERN.test(id)
      ? await this.endpoints.findOfTeam(principal.teamId, id)
      : null;
    if (!endpoint) throw ApiError.notFound(`notification endpoint "${id}"`);
    return endpoint;
  }

  async update(
    principal: Principal,
    id: string,
    dto: UpdateNotificationEndpointDto,
  ): Promise<NotificationEndpoint> {
    const endpoint = await this.get(principal, id);
    if (dto.url !== undefined) await this.assertUrl(dto.url);
    const changes: Partial<NotificationEndpoint> = {};
    if (dto.url !== undefined) changes.url = dto.url;
    if (dto.events !== undefined) changes.events = dto.events;
    if (dto.format !== undefined) changes.format = dto.format;
    if (dto.enabled !== undefined) changes.enabled = dto.enabled;
    const updated = { ...endpoint, ...changes, updatedAt: new Date() };
    await this.dataSource.transaction(async (manager) => {
      await this.endpoints.update(manager, endpoint.id, {
        ...changes,
        updatedAt: updated.updatedAt,
      });
      await this.teamEndpoints.changed(manager, endpoint.teamId);
      await this.audit.record(
        manager,
        principal,
        'notification_endpoint.update',
        target(endpoint),
        {
          ...(changes.url !== undefined ? { url_host: hostOf(changes.url) } : {}),
          ...(changes.events !== undefined ? { events: changes.events } : {}),
          ...(changes.format !== undefined ? { format: changes.format } : {}),
          ...(changes.enabled !== undefined ? { enabled: changes.enabled } : {}),
        },
      );
    });
    return updated;
  }

  /** Deletes the endpoint and its delivery log; attempts still queued find nothing to send. */
  async remove(principal: Principal, id: string): Promise<void> {
    const endpoint = await this.get(principal, id);
    await this.dataSource.transaction(async (manager) => {
      await this.endpoints.delete(manager, endpoint.id);
      await this.teamEndpoints.changed(manager, endpoint.teamId);
      await this.audit.record(
        manager,
        principal,
        'notification_endpoint.delete',
        target(endpoint),
        {
          url_host: hostOf(endpoint.url),
        },
      );
    });
  }

  /** A new secret, used from the next attempt on; the old one signs nothing any more. */
  async rotateSecret(principal: Principal, id: string): Promise<EndpointWithSecret> {
    const endpoint = await this.get(principal, id);
    const secret = newSigningSecret();
    const now = new Date();
    const changes = {
      secretCiphertext: this.cipher.encrypt(secret, endpoint.teamId),
      secretUpdatedAt: now,
      updatedAt: now,
    };
    await this.dataSource.transaction(async (manager) => {
      await this.endpoints.update(manager, endpoint.id, changes);
      await this.audit.record(
        manager,
        principal,
        'notification_endpoint.rotate_secret',
        target(endpoint),
      );
    });
    return { endpoint: { ...endpoint, ...changes }, secret };
  }

  /** The endpoint's delivery log, newest first; `before` is the previous page's last id. */
  async deliveries(
    principal: Principal,
    id: string,
    limit: number,
    before?: string,
  ): Promise<NotificationDelivery[]> {
    const endpoint = await this.get(principal, id);
    return this.deliveryLog.pageOfEndpoint(endpoint.id, limit, before);
  }

  /** A failed delivery tried again from its first attempt, with the same message id. */
  async resend(
    principal: Principal,
    id: string,
    deliveryId: string,
  ): Promise<NotificationDelivery> {
    const endpoint = await this.get(principal, id);
    const delivery = /^\d{1,19}$/.test(deliveryId)
      ? await this.deliveryLog.findOfEndpoint(endpoint.id, deliveryId)
      : null;
    if (!delivery) throw ApiError.notFound(`delivery "${deliveryId}"`);
    if (!endpoint.enabled) {
      throw new ApiError(
        'conflict',
        'the endpoint is disabled: enable it (PATCH enabled: true) to resend',
        { retryable: false },
      );
    }
    const now = new Date();
    const resent = await this.dataSource.transaction(async (manager) => {
      if (!(await this.deliveryLog.restartFailed(manager, delivery.id, now))) {
        throw new ApiError(
          'conflict',
          `delivery ${delivery.id} is ${delivery.status}: only failed deliveries can be resent`,
          { retryable: false },
        );
      }
      await this.audit.record(
        manager,
        principal,
        'notification_endpoint.resend',
        target(endpoint),
        {
          delivery: delivery.id,
          event: delivery.event,
        },
      );
      return { ...delivery, status: 'pending' as const, attempts: 0, nextAttemptAt: now };
    });
    await this.queue.enqueue({ deliveryId: resent.id, nextAttemptAt: now });
    return resent;
  }

  private async assertUrl(url: string): Promise<void> {
    const problem = await endpointUrlProblem(this.guard, url);
    if (problem) throw ApiError.invalid('url', problem);
  }
}

function target(endpoint: NotificationEndpoint) {
  return { type: 'notification_endpoint', id: endpoint.id };
}

/** What the audit log keeps of a URL: its host (a Slack webhook's path is a credential). */
function hostOf(url: string): string {
  return new URL(url).host;
}
