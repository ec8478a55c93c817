import type { ConsumedQueue } from '../common/queues/consumed-queues';
import { DEBUG_AGENTS_QUEUE, DEBUG_JOB } from '../modules/workers/debug/debug-agent-queues';
import { NOTIFICATIONS_QUEUE, SEND_JOB } from '../modules/notifications/notification-queue';
import { EXECUTE_JOB, RUNS_QUEUE } from '../modules/runs/run-queue.service';
import { DELIVERIES_QUEUE, EVALUATE_JOB } from '../modules/webhooks/delivery-evaluation.queue';

/** The queues whose depth and age the main application's metrics show. */
export const PROBED_QUEUES: readonly string[] = [RUNS_QUEUE, DELIVERIES_QUEUE, NOTIFICATIONS_QUEUE];

/** Every job Ambient enqueues, and the role whose processes must have its processor. */
export const AMBIENT_CONSUMED_QUEUES: readonly ConsumedQueue[] = [
  { queue: RUNS_QUEUE, job: EXECUTE_JOB, role: 'worker' },
  { queue: DELIVERIES_QUEUE, job: EVALUATE_JOB, role: 'worker' },
  { queue: DEBUG_AGENTS_QUEUE, job: DEBUG_JOB, role: 'worker' },
  { queue: NOTIFICATIONS_QUEUE, job: SEND_JOB, role: 'worker' },
];
