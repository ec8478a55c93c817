import type {
  NotificationDeliveryDto,
  NotificationEndpointDto,
} from './dto/notification-endpoint.dto';
import type { NotificationDelivery } from './entities/notification-delivery.entity';
import type { NotificationEndpoint } from './entities/notification-endpoint.entity';

export function toEndpointDto(endpoint: NotificationEndpoint): NotificationEndpointDto {
  return {
    id: endpoint.id,
    url: endpoint.url,
    events: endpoint.events,
    format: endpoint.format,
    enabled: endpoint.enabled,
    created_at: endpoint.createdAt.toISOString(),
    updated_at: endpoint.updatedAt.toISOString(),
    secret_updated_at: endpoint.secretUpdatedAt.toISOString(),
  };
}

export function toDeliveryDto(delivery: NotificationDelivery): NotificationDeliveryDto {
  return {
    id: delivery.id,
    message_id: delivery.messageId,
    event: delivery.event,
    status: delivery.status,
    attempts: delivery.attempts,
    response_code: delivery.responseCode,
    last_error: delivery.lastError,
    next_attempt_at: delivery.nextAttemptAt?.toISOString() ?? null,
    last_attempt_at: delivery.lastAttemptAt?.toISOString() ?? null,
    created_at: delivery.createdAt.toISOString(),
    payload: JSON.parse(delivery.payload) as Record<string, unknown>,
  };
}
