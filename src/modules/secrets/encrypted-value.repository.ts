import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { Query } from './mcp-secret-columns';

/** A row of a column that holds a SecretCipher value, with the team id the value is bound to. */
export interface EncryptedRow {
  id: string;
  team_id: string;
  value: Buffer;
}

/**
 * The statements that read and rewrite stored SecretCipher values (re-encryption after a key
 * rotation): `table` and `column` are the code's own constants, never input. Every statement
 * runs in the caller's transaction (`manager`).
 */
@Injectable()
export class EncryptedValueRepository {
  /** The next `limit` rows after id `after`, locked until the transaction ends. */
  lockedBatch(
    manager: EntityManager,
    table: string,
    column: string,
    after: string,
    limit: number,
  ): Promise<EncryptedRow[]> {
    return manager.query(
      `SELECT id, team_id, ${column} AS value FROM ${table}
          WHERE id > ? ORDER BY id LIMIT ${limit} FOR UPDATE`,
      [after],
    ) as Promise<EncryptedRow[]>;
  }

  async setValue(
    manager: EntityManager,
    table: string,
    column: string,
    id: string,
    value: Buffer,
  ): Promise<void> {
    await manager.query(`UPDATE ${table} SET ${column} = ? WHERE id = ?`, [value, id]);
  }

  /** The statements of `rewriteStoredMcpValues`, run in `manager`'s transaction. */
  queryIn(manager: EntityManager): Query {
    return (sql, params) => manager.query(sql, params);
  }
}
