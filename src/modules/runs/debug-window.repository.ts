import { Injectable } from '@nestjs/common';
import { SqlRepository } from '../../database/sql-repository';

/** `true`/`false` as JSON values on both MySQL and MariaDB (MariaDB's JSON_SET would store 1). */
const JSON_TRUE = `JSON_EXTRACT('true', '$')`;
const JSON_FALSE = `JSON_EXTRACT('false', '$')`;

/** The debug window of a failed environment setup (`status_message.debug_agent_active`). */
@Injectable()
export class DebugWindowRepository extends SqlRepository {
  /** Sets `debug_agent_active` if the window is open (FAILED setup, workspace still kept). */
  async openDebugAgent(runId: string, now: Date): Promise<boolean> {
    const result = (await this.db().query(
      `UPDATE runs SET status_message = JSON_SET(status_message, '$.debug_agent_active', ${JSON_TRUE})
        WHERE id = ? AND state = 'FAILED' AND workspace_retained_until > ?
          AND JSON_UNQUOTE(JSON_EXTRACT(status_message, '$.error_code')) = 'environment_setup_failed'`,
      [runId, now],
    )) as { affectedRows?: number };
    return (result.affectedRows ?? 0) > 0;
  }

  async closeDebugAgent(runId: string): Promise<void> {
    await this.db().query(
      `UPDATE runs SET status_message = JSON_SET(status_message, '$.debug_agent_active', ${JSON_FALSE})
        WHERE id = ? AND state = 'FAILED'`,
      [runId],
    );
  }

  async inDebugWindow(runId: string, now: Date): Promise<boolean> {
    const rows = (await this.db().query(
      `SELECT 1 AS ok FROM runs WHERE id = ? AND state = 'FAILED' AND workspace_retained_until > ?`,
      [runId, now],
    )) as unknown[];
    return rows.length > 0;
  }
}
