import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Pool, PoolConnection, PoolOptions } from 'mysql2';
import type { DataSource } from 'typeorm';
import type { MysqlDriver } from 'typeorm/driver/mysql/MysqlDriver';
import { MAX_STATEMENT_BYTES, SqlRunner, Statement, statementOf } from './raw-sql';

/** Connections of the packed pool: the batch writers that use it keep at most this many busy. */
const POOL_SIZE = 4;

function send(connection: PoolConnection, statements: Statement[]): Promise<unknown[]> {
  const sql = statements.map((s) => s.sql).join(';\n');
  const params = statements.flatMap((s) => s.params);
  return new Promise((resolve, reject) => {
    connection.query(sql, params, (err, result) => {
      if (err) return reject(err);
      // One statement answers with its own result, several with one result each.
      resolve(statements.length === 1 ? [result] : (result as unknown[]));
    });
  });
}

/**
 * One transaction on a connection of the packed pool. Statements whose results nobody reads
 * (`add`) are held and go to MySQL in the packet of the next `query` or of the `COMMIT`, so that
 * a transaction of writes costs one round trip instead of one per statement. A packet is sent
 * early when it would exceed MAX_STATEMENT_BYTES (far below `max_allowed_packet`).
 */
export class PackedTransaction implements SqlRunner {
  private pending: Statement[] = [statementOf('START TRANSACTION')];
  private pendingBytes = 0;

  constructor(private readonly connection: PoolConnection) {}

  /** Sends what is held with this statement, in one packet; resolves to this statement's result. */
  async query(sql: string, params: unknown[] = []): Promise<unknown> {
    return this.flush(statementOf(sql, params));
  }

  /** Holds statements for the next packet. */
  async add(statements: Statement[]): Promise<void> {
    for (const s of statements) {
      if (this.pending.length && this.pendingBytes + s.bytes > MAX_STATEMENT_BYTES) {
        await send(this.connection, this.takePending());
      }
      this.pending.push(s);
      this.pendingBytes += s.bytes;
    }
  }

  /** Sends what is held and COMMIT, in one packet. */
  async commit(): Promise<void> {
    await this.flush(statementOf('COMMIT'));
  }

  private async flush(last: Statement): Promise<unknown> {
    if (this.pending.length && this.pendingBytes + last.bytes > MAX_STATEMENT_BYTES) {
      await send(this.connection, this.takePending());
    }
    const results = await send(this.connection, [...this.takePending(), last]);
    return results[results.length - 1];
  }

  private takePending(): Statement[] {
    const taken = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    return taken;
  }
}

/**
 * Transactions of a few writes in one round trip (`PackedTransaction`), for the hot batch writers:
 * under load the event loop takes a few milliseconds to come back to each answer of MySQL, and a
 * transaction of five statements waited for five of them while its callers held their requests.
 * It needs connections that accept several statements per packet (`multipleStatements`), so it
 * has its own small pool, opened on first use with the data source's options otherwise; that
 * flag is not set on the main pool, where a statement built from text could then carry others.
 * Every value still goes through mysql2's escaping as a `?` parameter.
 */
@Injectable()
export class PackedTransactions implements OnApplicationShutdown {
  private readonly logger = new Logger('PackedTransactions');
  private pool: Pool | null = null;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * `work` between `START TRANSACTION` and `COMMIT` on one connection; rolled back when it throws.
   * A connection whose rollback failed is destroyed, never handed out again mid-transaction.
   */
  async run<T>(work: (tx: PackedTransaction) => Promise<T>): Promise<T> {
    const connection = await this.connection();
    let result: T;
    try {
      const tx = new PackedTransaction(connection);
      result = await work(tx);
      await tx.commit();
    } catch (err) {
      await new Promise<void>((resolve) =>
        connection.query('ROLLBACK', (rollbackErr) => {
          if (rollbackErr) connection.destroy();
          else connection.release();
          resolve();
        }),
      );
      throw err;
    }
    connection.release();
    return result;
  }

  async onApplicationShutdown(): Promise<void> {
    const pool = this.pool;
    this.pool = null;
    if (pool) await new Promise<void>((resolve) => pool.end(() => resolve()));
  }

  private connection(): Promise<PoolConnection> {
    const pool = (this.pool ??= this.createPool());
    return new Promise((resolve, reject) => {
      pool.getConnection((err, connection) => {
        if (err) return reject(err);
        // An idle connection's error (MySQL restarted) must not crash the process.
        if (connection.listeners('error').length === 0) {
          connection.on('error', (error) => this.logger.warn(`connection error: ${error.message}`));
        }
        resolve(connection);
      });
    });
  }

  private createPool(): Pool {
    const driver = this.dataSource.driver as MysqlDriver;
    // The options TypeORM's own pool was made with (charset, timezone, big numbers, extra…).
    const options = (
      driver as unknown as {
        createConnectionOptions(options: unknown, credentials: unknown): PoolOptions;
      }
    ).createConnectionOptions(driver.options, driver.options);
    return (driver.mysql as { createPool(options: PoolOptions): Pool }).createPool({
      ...options,
      connectionLimit: POOL_SIZE,
      multipleStatements: true,
    });
  }
}
