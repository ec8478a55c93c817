/** What a notification endpoint may subscribe to. */
export const NOTIFICATION_EVENTS = [
  'run.blocked',
  'run.succeeded',
  'run.failed',
  'run.cancelled',
  'approval.requested',
  'approval.decided',
] as const;
export type NotificationEvent = (typeof NOTIFICATION_EVENTS)[number];

/** How a delivery's body is shaped: a Standard Webhooks envelope, or Slack's `{"text": …}`. */
export const NOTIFICATION_FORMATS = ['standard', 'slack'] as const;
export type NotificationFormat = (typeof NOTIFICATION_FORMATS)[number];

/** pending: an attempt is due at `next_attempt_at`; failed: every attempt failed (re-sendable). */
export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type NotificationDeliveryStatus = (typeof DELIVERY_STATUSES)[number];
