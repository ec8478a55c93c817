import { In } from 'typeorm';
import { auditEventRow } from '../../test/support/unit/audit-events';
import { insertRun } from '../../test/support/unit/run-rows';
import { useTestDatabase } from '../../test/support/unit/test-database';
import { AuditEvent } from '../modules/audit/audit-event.entity';
import { Run } from '../modules/runs/entities/run.entity';
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

  it('reads entities as TypeORM does: every column type, nulls, transformers, its own rows only', async () => {
    const [full, bare] = [
      await insertRun(db.dataSource, db.teamId),
      await insertRun(db.dataSource, db.teamId),
    ];
    const other = await insertRun(db.dataSource, 'OtherTeam'.padEnd(22, '0'));
    const at = new Date('2026-12-04T21:50:01.234Z');
    await db.dataSource.getRepository(Run).update(full, {
      config: { model_id: 'm', mcp_servers: { a: { url: 'https://x', headers: { k: 'v' } } } },
      modelId: 'm',
      skillSpec: 'team/repo:skill',
      agentSkill: { name: 'skill', description: 'd' } as Run['agentSkill'],
      scheduleInfo: { schedule_id: 's', cron_schedule: '* * * * *' } as Run['scheduleInfo'],
      statusMessage: {
        message: 'done "quoted" ✓',
        error_code: 'budget_exceeded',
        retryable: false,
      },
      requestUsage: { inference_cost: 1.5 } as Run['requestUsage'],
      atCapacity: true,
      maxCostUsd: 12.345678,
      runTimeMs: 9_007_199_254,
      executionStartedAt: at,
      leaseExpiresAt: at,
      finishedAt: at,
      leaseOwner: 'w1',
    });
    const ids = [full, bare, other];
    const read = await sql.selectEntities(Run, 'id IN (?) AND team_id = ?', [ids, db.teamId]);
    const orm = await db.dataSource.getRepository(Run).findBy({ id: In(ids), teamId: db.teamId });
    const byId = (runs: Run[]) => new Map(runs.map((run) => [run.id, run]));
    expect(read).toHaveLength(2);
    expect(read.every((run) => run instanceof Run)).toBe(true);
    expect(byId(read)).toEqual(byId(orm));
    const filled = byId(read).get(full)!;
    expect(filled.maxCostUsd).toBe(12.345678);
    expect(filled.runTimeMs).toBe(9_007_199_254);
    expect(filled.atCapacity).toBe(true);
    expect(filled.finishedAt).toEqual(at);
    expect(filled.statusMessage).toEqual({
      message: 'done "quoted" ✓',
      error_code: 'budget_exceeded',
      retryable: false,
    });
    expect(byId(read).get(bare)!.maxCostUsd).toBeNull();
  });
});
