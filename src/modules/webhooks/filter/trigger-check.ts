import { JsonValue, matchPayload, PayloadFilter } from './payload-filter';

export interface TriggerFilter {
  webhook_ids: string[];
  payload?: PayloadFilter | null;
}

export interface TriggerCheck {
  webhook_check: { passed: boolean; detail: string };
  payload_check: { passed: boolean; failed_key?: string; detail: string };
  matched: boolean;
}

/** Both checks of a webhook trigger against one delivery: its webhook, then its payload. */
export function checkTrigger(
  filter: TriggerFilter,
  webhookId: string,
  body: JsonValue,
): TriggerCheck {
  const webhookPassed = filter.webhook_ids.includes(webhookId);
  const payload = matchPayload(filter.payload ?? null, body);
  return {
    webhook_check: {
      passed: webhookPassed,
      detail: webhookPassed
        ? `webhook ${webhookId} is listed in webhook_ids`
        : `webhook ${webhookId} is not in webhook_ids [${filter.webhook_ids.join(', ')}]`,
    },
    payload_check: payload.matched
      ? {
          passed: true,
          detail: filter.payload ? 'every key of the payload filter matched' : 'no payload filter',
        }
      : {
          passed: false,
          failed_key: payload.failedKey,
          detail: `${payload.failedKey}: ${payload.reason}`,
        },
    matched: webhookPassed && payload.matched,
  };
}
