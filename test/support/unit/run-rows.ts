import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { RunState } from '../../../src/modules/runs/run-state';

export interface RunRow {
  state?: RunState;
  executionCount?: number;
  attempt?: number;
  leaseOwner?: string | null;
  config?: Record<string, unknown>;
  modelId?: string | null;
}

/** Inserts a run as the API (or a worker's claim) leaves it; returns its id. */
export async function insertRun(
  dataSource: DataSource,
  teamId: string,
  row: RunRow = {},
): Promise<string> {
  const id = randomUUID();
  const now = new Date();
  await dataSource.query(
    `INSERT INTO runs (id, team_id, title, prompt, state, source, config, model_id, root_run_id,
       conversation_id, execution_count, attempt, lease_owner, created_at, updated_at)
     VALUES (?, ?, 'spec run', 'do it', ?, 'API', ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      id,
      teamId,
      row.state ?? 'QUEUED',
      JSON.stringify(row.config ?? {}),
      row.modelId ?? null,
      id,
      id,
      row.executionCount ?? 0,
      row.attempt ?? row.executionCount ?? 0,
      row.leaseOwner ?? null,
      now,
      now,
    ],
  );
  return id;
}

/** What a user sees of a run: its state, status message and lease. */
export async function runRow(dataSource: DataSource, runId: string) {
  const [row] = (await dataSource.query(
    `SELECT state, status_message, lease_owner, execution_count, attempt, request_usage
       FROM runs WHERE id = ?`,
    [runId],
  )) as {
    state: RunState;
    status_message: { message?: string; error_code?: string; retryable?: boolean } | null;
    lease_owner: string | null;
    execution_count: number;
    attempt: number;
    request_usage: unknown;
  }[];
  return row;
}

/** The run's timeline event types, oldest first. */
export async function eventTypes(dataSource: DataSource, runId: string): Promise<string[]> {
  const rows = (await dataSource.query(
    `SELECT event_type FROM run_events WHERE run_id = ? ORDER BY id`,
    [runId],
  )) as { event_type: string }[];
  return rows.map((r) => r.event_type);
}

/** Stores a follow-up no execution took yet; returns its id. */
export async function insertFollowup(
  dataSource: DataSource,
  runId: string,
  fields: { consumed?: boolean } = {},
): Promise<string> {
  const id = randomUUID();
  await dataSource.query(
    `INSERT INTO run_followups (id, run_id, message, outcome, consumed_at, created_at)
     VALUES (?, ?, 'and also this', 'queued_prompt', ?, ?)`,
    [id, runId, fields.consumed ? new Date() : null, new Date()],
  );
  return id;
}
