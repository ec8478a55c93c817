import type { PoolConnection } from 'mysql2';
import type { DataSource, EntityTarget, ObjectLiteral } from 'typeorm';
import type { MysqlDriver } from 'typeorm/driver/mysql/MysqlDriver';

/** What a batch writer needs of a connection: a statement with `?` parameters. */
export interface SqlRunner {
  query(sql: string, params?: unknown[]): Promise<unknown>;
}

/**
 * Bytes one multi-row INSERT may reach before the rest goes in another statement (same
 * transaction): far below `max_allowed_packet` (16 MiB on MariaDB, 64 MiB on MySQL 8), since one
 * run may carry a prompt of 200 000 characters.
 */
export const MAX_STATEMENT_BYTES = 4 * 1024 * 1024;

/** A statement with its `?` parameters and a bound of its size once they are inlined. */
export interface Statement {
  sql: string;
  params: unknown[];
  /** At most how many bytes the parameters take in the statement sent (UTF-8, escaped). */
  bytes: number;
}

/**
 * A bound of the bytes a parameter takes once mysql2 inlined it (a string may be all 3-byte); a
 * list (`IN (?)`) or a list of rows (`VALUES ?`) takes its values' bytes.
 */
export function valueBytes(value: unknown): number {
  if (typeof value === 'string') return value.length * 3;
  if (Buffer.isBuffer(value)) return value.length * 2;
  if (Array.isArray(value)) return value.reduce<number>((sum, v) => sum + valueBytes(v), 0);
  return 16;
}

/** `sql` with its `?` parameters, and a bound of its size once they are inlined. */
export function statementOf(sql: string, params: unknown[] = []): Statement {
  return { sql, params, bytes: sql.length + valueBytes(params) };
}

function run(connection: PoolConnection, sql: string, params?: unknown[]): Promise<unknown> {
  return new Promise((resolve, reject) => {
    connection.query(sql, params, (err, result) => (err ? reject(err) : resolve(result)));
  });
}

/**
 * Statements straight on the data source's mysql2 pool (same connections, same session settings),
 * for the hot write paths: TypeORM's query runner costs, per statement, a query runner, broadcasts
 * to every subscriber and a `require` in mysql2's `promise()`, and none of that is needed where
 * no subscriber listens (no entity is inserted through the ORM) — run creation and webhook
 * ingress. Errors are mysql2's own (`code`, `errno`, `sqlMessage`), as TypeORM's carry them too.
 */
export class RawSql {
  constructor(private readonly dataSource: DataSource) {}

  /** One statement on a pooled connection (autocommit). */
  async query(sql: string, params?: unknown[]): Promise<unknown> {
    const connection = await this.connection();
    try {
      return await run(connection, sql, params);
    } finally {
      connection.release();
    }
  }

  /**
   * `work` inside `START TRANSACTION … COMMIT` on one connection; rolled back when it throws. A
   * connection whose rollback failed is destroyed, never handed out again mid-transaction.
   */
  async transaction<T>(work: (sql: SqlRunner) => Promise<T>): Promise<T> {
    const connection = await this.connection();
    let result: T;
    try {
      await run(connection, 'START TRANSACTION');
      result = await work({ query: (sql, params) => run(connection, sql, params) });
      await run(connection, 'COMMIT');
    } catch (err) {
      try {
        await run(connection, 'ROLLBACK');
        connection.release();
      } catch {
        connection.destroy();
      }
      throw err;
    }
    connection.release();
    return result;
  }

  /**
   * Multi-row INSERTs of `rows` into the entity's table, built from its metadata, each value
   * prepared by the driver as TypeORM's own inserts do (JSON, booleans, dates); generated columns
   * are left to MySQL. TypeORM's query builder costs time quadratic in the parameters.
   */
  async insertRows<T extends ObjectLiteral>(
    sql: SqlRunner,
    entity: EntityTarget<T>,
    rows: Partial<T>[],
  ): Promise<void> {
    for (const statement of this.insertStatements(entity, rows)) {
      await sql.query(statement.sql, statement.params);
    }
  }

  /** The statements of `insertRows`, to be sent by the caller (see PackedTransaction). */
  insertStatements<T extends ObjectLiteral>(
    entity: EntityTarget<T>,
    rows: Partial<T>[],
  ): Statement[] {
    const meta = this.dataSource.getMetadata(entity);
    const driver = this.dataSource.driver;
    const columns = meta.columns.filter((column) => !column.isGenerated);
    const tuple = `(${columns.map(() => '?').join(', ')})`;
    const head = `INSERT INTO \`${meta.tableName}\` (${columns.map((c) => `\`${c.databaseName}\``).join(', ')}) VALUES `;
    const statements: Statement[] = [];
    let params: unknown[] = [];
    let count = 0;
    let bytes = 0;
    const flush = () => {
      if (count === 0) return;
      const text = head + Array(count).fill(tuple).join(', ');
      statements.push({ sql: text, params, bytes: bytes + text.length });
      params = [];
      count = 0;
      bytes = 0;
    };
    for (const row of rows) {
      const values = columns.map(
        (column) => driver.preparePersistentValue(column.getEntityValue(row), column) ?? null,
      );
      const size = values.reduce<number>((sum, value) => sum + valueBytes(value), 0);
      if (count > 0 && bytes + size > MAX_STATEMENT_BYTES) flush();
      params.push(...values);
      count += 1;
      bytes += size;
    }
    flush();
    return statements;
  }

  private connection(): Promise<PoolConnection> {
    return (
      this.dataSource.driver as MysqlDriver
    ).obtainMasterConnection() as Promise<PoolConnection>;
  }
}
