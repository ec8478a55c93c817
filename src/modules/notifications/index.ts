/** What other modules may use of notifications/: they import it from here only (ESLint rule ambient/import-through-index). */
export { NOTIFICATION_EVENTS } from './notification-events';
export type { NotificationEvent } from './notification-events';
export { NotificationEmitter } from './notification-emitter.service';
export type { NotificationData } from './notification-emitter.service';
export { NotificationsModule } from './notifications.module';
export { RunEndNotifications } from './run-end-notifications';
