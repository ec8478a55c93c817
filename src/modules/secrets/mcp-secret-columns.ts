import type { McpSecretValue, StoredMcpServerConfig } from '../run-config';
import { mapMcpValues } from './mcp-secret-values';

/** Every JSON column holding an `mcp_servers` map (at `$.mcp_servers`), with its row id. */
export const MCP_SECRET_COLUMNS = [
  { table: 'runs', id: 'id', column: 'config' },
  { table: 'schedules', id: 'id', column: 'agent_config' },
  { table: 'agent_identities', id: 'user_id', column: 'settings' },
] as const;

const BATCH = 200;

export type Query = (sql: string, params?: unknown[]) => Promise<unknown>;

export interface StoredRow {
  table: string;
  id: string;
  teamId: string;
}

/**
 * Returns the value to store instead of `value`, or `value` itself to leave it. Called for every
 * `env`/`headers` value of every stored `mcp_servers` map.
 */
export type McpValueRewrite = (value: McpSecretValue, row: StoredRow) => McpSecretValue;

/**
 * Walks the stored `mcp_servers` maps, BATCH rows at a time in id order, and writes back the
 * documents whose values `rewrite` changed. `inBatch` runs one batch: a transaction of its own for
 * the re-encryption (rows are locked, then re-read), the migration's transaction for a migration.
 * Returns the number of values changed, by table.
 */
export async function rewriteStoredMcpValues(
  inBatch: <T>(work: (query: Query) => Promise<T>) => Promise<T>,
  rewrite: McpValueRewrite,
): Promise<Record<string, number>> {
  const changed: Record<string, number> = {};
  for (const { table, id, column } of MCP_SECRET_COLUMNS) {
    changed[table] = 0;
    let after = '';
    for (;;) {
      const ids = await inBatch(async (query) => {
        const rows = (await query(
          `SELECT ${id} AS id, team_id, ${column} AS doc FROM ${table}
            WHERE ${id} > ? AND JSON_CONTAINS_PATH(${column}, 'one', '$.mcp_servers')
            ORDER BY ${id} LIMIT ${BATCH} FOR UPDATE`,
          [after],
        )) as { id: string; team_id: string; doc: string | Record<string, unknown> }[];
        for (const row of rows) {
          const doc = (typeof row.doc === 'string' ? JSON.parse(row.doc) : row.doc) as {
            mcp_servers?: Record<string, StoredMcpServerConfig>;
          };
          if (!doc.mcp_servers || typeof doc.mcp_servers !== 'object') continue;
          let count = 0;
          const where = { table, id: row.id, teamId: row.team_id };
          const servers = mapMcpValues(doc.mcp_servers, (value) => {
            const next = rewrite(value, where);
            if (next !== value) count += 1;
            return next;
          });
          if (count === 0) continue;
          await query(`UPDATE ${table} SET ${column} = ? WHERE ${id} = ?`, [
            JSON.stringify({ ...doc, mcp_servers: servers }),
            row.id,
          ]);
          changed[table] += count;
        }
        return rows.map((row) => row.id);
      });
      if (ids.length < BATCH) break;
      after = ids[ids.length - 1];
    }
  }
  return changed;
}
