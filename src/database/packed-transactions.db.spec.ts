import { auditEventRow } from '../../test/support/unit/audit-events';
import { useTestDatabase } from '../../test/support/unit/test-database';
import { AuditEvent } from '../modules/audit/audit-event.entity';
import { PackedTransactions } from './packed-transactions';
import { RawSql } from './raw-sql';

/** Transactions sent as few packets: all or nothing, results where they are read, big batches split. */
describe('PackedTransactions (database)', () => {
  const db = useTestDatabase('packed');
  let packed: PackedTransactions;
  let sql: RawSql;

  beforeAll(() => {
    packed = new PackedTransactions(db.dataSource);
    sql = new RawSql(db.dataSource);
  });
  afterAll(() => packed.onApplicationShutdown());

  const event = (id: string, details?: AuditEvent['details']): AuditEvent =>
    auditEventRow(db.teamId, id, details);
  const stored = async (prefix: string) =>
    (
      (await db.dataSource.query(`SELECT id FROM audit_events WHERE id LIKE ? ORDER BY id`, [
        `${prefix}%`,
      ])) as { id: string }[]
    ).map((row) => row.id.replace(/0+$/, ''));

  it('commits the statements held with the transaction and answers the ones that are read', async () => {
    const seen = await packed.run(async (tx) => {
      await tx.add(sql.insertStatements(AuditEvent, [event('Held1'), event('Held2')]));
      // Read in the same transaction: it sees the rows held before it.
      const rows = (await tx.query(
        `SELECT COUNT(*) AS n FROM audit_events WHERE id LIKE 'Held%'`,
      )) as {
        n: string | number;
      }[];
      await tx.add(sql.insertStatements(AuditEvent, [event('Held3')]));
      return Number(rows[0].n);
    });
    expect(seen).toBe(2);
    expect(await stored('Held')).toEqual(['Held1', 'Held2', 'Held3']);
    const [row] = await db.dataSource.getRepository(AuditEvent).findBy({ id: event('Held1').id });
    expect(row).toEqual(event('Held1'));
  });

  it('stores nothing when a statement of the packet fails, and its connection serves again', async () => {
    const failing = packed.run((tx) =>
      tx.add(
        sql
          .insertStatements(AuditEvent, [event('Dup1')])
          .concat(sql.insertStatements(AuditEvent, [event('Dup2'), event('Dup2')])),
      ),
    );
    await expect(failing).rejects.toMatchObject({ code: 'ER_DUP_ENTRY' });
    expect(await stored('Dup')).toEqual([]);
    await packed.run((tx) => tx.add(sql.insertStatements(AuditEvent, [event('After1')])));
    expect(await stored('After')).toEqual(['After1']);
  });

  it('splits a batch larger than a packet may be, still in one transaction', async () => {
    // 15 events of 1.2 MB: 18 MB in all, more than MariaDB's max_allowed_packet (16 MiB) and
    // each alone over a quarter of the split threshold (3 bytes per character at most).
    const big = (id: string) => event(id, { text: 'x'.repeat(1_200_000) });
    const ids = Array.from({ length: 15 }, (_, i) => `Big${String.fromCharCode(65 + i)}`);
    const insert = (names: string[]) =>
      packed.run((tx) =>
        tx.add(names.flatMap((id) => sql.insertStatements(AuditEvent, [big(id)]))),
      );
    await insert(ids);
    expect(await stored('Big')).toEqual(ids);

    await expect(insert(['BadA', 'BadB', 'BadC', 'BadA'])).rejects.toMatchObject({
      code: 'ER_DUP_ENTRY',
    });
    expect(await stored('Bad')).toEqual([]);
  });
});
