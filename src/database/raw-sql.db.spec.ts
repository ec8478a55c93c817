import { auditEventRow } from '../../test/support/unit/audit-events';
import { useTestDatabase } from '../../test/support/unit/test-database';
import { AuditEvent } from '../modules/audit/audit-event.entity';
import { RawSql } from './raw-sql';

/** RawSql on a real database: commit, rollback, and rows inserted as TypeORM would store them. */
describe('RawSql (database)', () => {
  const db = useTestDatabase('raw_sql');
  let sql: RawSql;

  beforeAll(() => {
    sql = new RawSql(db.dataSource);
  });

  const event = (id: string): AuditEvent =>
    auditEventRow(db.teamId, id, { title: 'a "quoted" title', nested: { ok: true } });

  const stored = (id: string) =>
    db.dataSource.getRepository(AuditEvent).findOneBy({ id: id.padEnd(22, '0') });

  it('commits what the transaction wrote, with JSON and dates as TypeORM reads them back', async () => {
    await sql.transaction((runner) => sql.insertRows(runner, AuditEvent, [event('Commit1')]));
    expect(await stored('Commit1')).toEqual(event('Commit1'));
  });

  it('rolls back everything when the work throws, and the pool stays usable', async () => {
    await expect(
      sql.transaction(async (runner) => {
        await sql.insertRows(runner, AuditEvent, [event('Rollback1')]);
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    expect(await stored('Rollback1')).toBeNull();
    const failing = sql.transaction((runner) =>
      sql.insertRows(runner, AuditEvent, [event('Dup1'), event('Dup1')]),
    );
    await expect(failing).rejects.toMatchObject({ code: 'ER_DUP_ENTRY' });
    expect(await stored('Dup1')).toBeNull();
    expect(await sql.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
  });
});
