import { toRfc3339 } from '../../../common/time';
import type { Webhook } from '../entities/webhook.entity';
import { webhookUrl } from '../webhook-secrets';
import type { WebhookDto } from './dto/webhook.dto';

export function toWebhookDto(webhook: Webhook, baseUrl: string, token?: string): WebhookDto {
  return {
    uid: webhook.id,
    factory_uid: webhook.factoryId,
    name: webhook.name,
    url: webhookUrl(baseUrl, webhook.id, webhook.authMode, token),
    auth_mode: webhook.authMode,
    signature_scheme: webhook.signatureScheme,
    secret_name: webhook.secretName,
    delivery_id_header: webhook.deliveryIdHeader,
    enabled: webhook.enabled,
    created_at: toRfc3339(webhook.createdAt)!,
    updated_at: toRfc3339(webhook.updatedAt)!,
    secret_updated_at: toRfc3339(webhook.secretUpdatedAt)!,
  };
}
