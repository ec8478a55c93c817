import { Injectable, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { FailedRunFollowups } from '../../runs/failed-run-followups';
import { DEBUG_JOB, DebugAgentQueues } from './debug-agent-queues';

/** `true` as a JSON value on both MySQL and MariaDB (MariaDB's JSON_SET would store 1). */
const JSON_TRUE = `JSON_EXTRACT('true', '$')`;
const JSON_FALSE = `JSON_EXTRACT('false', '$')`;

/**
 * The debug window of a run whose environment setup failed: while its workspace is retained, a
 * follow-up starts a debug agent in it instead of a new execution. The run stays FAILED with its
 * original status message; `debug_agent_active` says an agent is at work.
 */
@Injectable()
export class DebugWindowService implements OnModuleInit {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly queues: DebugAgentQueues,
    private readonly failedRunFollowups: FailedRunFollowups,
  ) {}

  onModuleInit(): void {
    this.failedRunFollowups.register((runId) => this.activate(runId));
  }

  /** True when the run is in its debug window: a debug agent is (now) active for it. */
  async activate(runId: string): Promise<boolean> {
    if (!(await this.activateInPlace(runId))) return false;
    const rows = (await this.dataSource.query(
      'SELECT workspace_volume AS volume FROM runs WHERE id = ?',
      [runId],
    )) as { volume: string | null }[];
    const volume = rows[0]?.volume;
    const queue = volume ? this.queues.forVolume(volume) : this.queues.local();
    // One job per run at a time; a follow-up arriving meanwhile is picked up by the live agent.
    await queue.add(DEBUG_JOB, { runId }, { jobId: `debug:${runId}` });
    return true;
  }

  /** Sets `debug_agent_active` if the window is open; the caller runs (or already is) the agent. */
  async activateInPlace(runId: string): Promise<boolean> {
    const result = (await this.dataSource.query(
      `UPDATE runs SET status_message = JSON_SET(status_message, '$.debug_agent_active', ${JSON_TRUE})
        WHERE id = ? AND state = 'FAILED' AND workspace_retained_until > ?
          AND JSON_UNQUOTE(JSON_EXTRACT(status_message, '$.error_code')) = 'environment_setup_failed'`,
      [runId, new Date()],
    )) as { affectedRows?: number };
    return (result.affectedRows ?? 0) > 0;
  }

  async deactivate(runId: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE runs SET status_message = JSON_SET(status_message, '$.debug_agent_active', ${JSON_FALSE})
        WHERE id = ? AND state = 'FAILED'`,
      [runId],
    );
  }

  async inWindow(runId: string): Promise<boolean> {
    const rows = (await this.dataSource.query(
      `SELECT 1 AS ok FROM runs WHERE id = ? AND state = 'FAILED' AND workspace_retained_until > ?`,
      [runId, new Date()],
    )) as unknown[];
    return rows.length > 0;
  }
}
