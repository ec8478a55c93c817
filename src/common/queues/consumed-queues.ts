import type { Role } from '../../config/app-config';

/** A queue and job that a process with `role` must consume: start-up fails without a handler. */
export interface ConsumedQueue {
  queue: string;
  job: string;
  role: Role;
}

export const CONSUMED_QUEUES = 'ambient:consumed-queues';
