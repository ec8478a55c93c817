/**
 * The self-hosted worker websocket protocol of the public `oz-agent-worker`: text frames holding
 * `{type, data}`. Shared by the server gateway and Ambient's own worker program, so it imports
 * nothing but types.
 */
import type { AgentConfig } from '../../run-config';

/** Where workers connect, below the API's origin (`?worker_id=<id>`). */
export const WORKER_WS_PATH = '/api/v1/selfhosted/worker/ws';

/** The assignment's environment variable that carries the execution's run-scoped key. */
export const RUN_KEY_ENV = 'WARP_API_KEY';

/**
 * The longest raw transcript a finish report carries (within the 40 MB JSON body limit); a
 * longer stream is not sent and the execution's recorded messages stand in for it.
 */
export const MAX_RAW_TRANSCRIPT_CHARS = 30 * 1024 * 1024;

/** How long before its request a batched timeline event may have happened (`age_ms`). */
export const MAX_EVENT_AGE_MS = 60_000;

/** The only rejection reason the public worker sends. */
export const AT_CAPACITY_REASON = 'worker at maximum concurrency';

export interface WorkerTask {
  id: string;
  title: string;
  task_definition: { prompt: string };
  created_at: string;
  updated_at: string;
  agent_config_snapshot?: AgentConfig;
  agent_conversation_id?: string;
}

export interface TaskAssignment {
  task_id: string;
  /** The execution this assignment starts (a string on the wire). */
  execution_id?: string;
  task: WorkerTask;
  env_vars?: Record<string, string>;
}

export interface TaskFailed {
  task_id: string;
  message: string;
  task_state?: string;
  /** `user_error`, `operator_shutdown`, `runtime_crash` … (newer workers). */
  failure_cause?: string;
  /** The older workers' metrics reason (`task_timeout`, `graceful_shutdown` …). */
  failure_reason?: string;
  exit_code?: number;
}

export type ServerMessage =
  | { type: 'task_assignment'; data: TaskAssignment }
  | { type: 'task_cancellation'; data: { task_id: string } };

export type WorkerMessage =
  | { type: 'task_claimed'; data: { task_id: string; worker_id?: string } }
  | { type: 'task_rejected'; data: { task_id: string; reason?: string } }
  | { type: 'task_completed'; data: { task_id: string; message?: string; task_state?: string } }
  | { type: 'task_failed'; data: TaskFailed };

const WORKER_TYPES = ['task_claimed', 'task_rejected', 'task_completed', 'task_failed'] as const;
const SERVER_TYPES = ['task_assignment', 'task_cancellation'] as const;

export type Parsed<M> = { message: M } | { ignored: string };

export function encodeMessage(message: ServerMessage | WorkerMessage): string {
  return JSON.stringify(message);
}

/** A frame from a worker; anything malformed or unknown is reported as ignored, with why. */
export function parseWorkerMessage(text: string): Parsed<WorkerMessage> {
  return parseEnvelope<WorkerMessage>(text, WORKER_TYPES);
}

/** A frame from the server, as Ambient's worker program reads it. */
export function parseServerMessage(text: string): Parsed<ServerMessage> {
  const parsed = parseEnvelope<ServerMessage>(text, SERVER_TYPES);
  if ('message' in parsed && parsed.message.type === 'task_assignment') {
    const task = (parsed.message.data as Partial<TaskAssignment>).task;
    if (!task || typeof task !== 'object') return { ignored: 'task_assignment without a task' };
  }
  return parsed;
}

function parseEnvelope<M extends { type: string; data: { task_id: string } }>(
  text: string,
  known: readonly string[],
): Parsed<M> {
  let envelope: unknown;
  try {
    envelope = JSON.parse(text);
  } catch {
    return { ignored: 'not JSON' };
  }
  if (!envelope || typeof envelope !== 'object' || Array.isArray(envelope)) {
    return { ignored: 'not a {type, data} object' };
  }
  const { type, data } = envelope as { type?: unknown; data?: unknown };
  if (typeof type !== 'string') return { ignored: 'no type' };
  if (!known.includes(type)) return { ignored: `unknown type "${type}"` };
  if (!data || typeof data !== 'object' || Array.isArray(data)) {
    return { ignored: `${type} without a data object` };
  }
  const taskId = (data as { task_id?: unknown }).task_id;
  if (typeof taskId !== 'string' || taskId === '') return { ignored: `${type} without a task_id` };
  return { message: { type, data } as M };
}
