import * as mysql2 from 'mysql2';
import type { PoolConnection } from 'mysql2';
import * as mysql2Promise from 'mysql2/promise';
import { auditEventRow } from '../../test/support/unit/audit-events';
import { useTestDatabase } from '../../test/support/unit/test-database';
import { AuditEvent } from '../modules/audit/audit-event.entity';
import { makePromiseWrappersWithoutRequire } from './promise-wrapper';
import { mysqlPool } from './request-connections';

/** TypeORM's statements through the promise wrapper made without mysql2's per-call `require`. */
describe('makePromiseWrappersWithoutRequire (database)', () => {
  const db = useTestDatabase('promise_wrapper');
  const prototype = (mysql2 as unknown as { PoolConnection: { prototype: object } }).PoolConnection
    .prototype as { promise(): unknown };
  const original = prototype.promise;

  beforeAll(() => makePromiseWrappersWithoutRequire());
  afterAll(() => {
    prototype.promise = original;
  });

  it('replaces mysql2’s promise() with one that requires nothing', () => {
    expect(prototype.promise).not.toBe(original);
    expect(prototype.promise.toString()).not.toContain('require');
  });

  it('wraps a pooled connection once as mysql2’s own PromisePoolConnection, which queries and releases it', async () => {
    // Each application's start installs it again (two per process): no wrapper of a wrapper.
    makePromiseWrappersWithoutRequire();
    const connection = await new Promise<PoolConnection>((resolve, reject) =>
      mysqlPool(db.dataSource).getConnection((err, c) => (err ? reject(err) : resolve(c))),
    );
    const wrapped = connection.promise() as unknown as {
      connection: PoolConnection;
      query(sql: string, params: unknown[]): Promise<[unknown[], unknown]>;
      release(): void;
    };
    const Wrapper = (mysql2Promise as unknown as { PromisePoolConnection: new () => unknown })
      .PromisePoolConnection;
    expect(wrapped).toBeInstanceOf(Wrapper);
    expect(wrapped.connection).toBe(connection);
    const [rows] = await wrapped.query('SELECT ? + 1 AS two', [1]);
    expect(rows).toEqual([{ two: 2 }]);
    wrapped.release();
  });

  it('carries TypeORM’s transactions: a rollback leaves nothing, a commit keeps the row', async () => {
    const event = (id: string) => auditEventRow(db.teamId, id, { title: 'wrapped' });
    const stored = (id: string) =>
      db.dataSource.getRepository(AuditEvent).findOneBy({ id: id.padEnd(22, '0') });
    await expect(
      db.dataSource.transaction(async (manager) => {
        await manager.getRepository(AuditEvent).insert(event('Wrapped1'));
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    expect(await stored('Wrapped1')).toBeNull();
    await db.dataSource.transaction((manager) =>
      manager.getRepository(AuditEvent).insert(event('Wrapped2')),
    );
    expect(await stored('Wrapped2')).toEqual(event('Wrapped2'));
  });
});
