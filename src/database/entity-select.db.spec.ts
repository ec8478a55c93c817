import { EntityManager, In, QueryFailedError } from 'typeorm';
import { insertRun } from '../../test/support/unit/run-rows';
import { useTestDatabase } from '../../test/support/unit/test-database';
import { Run } from '../modules/runs/entities/run.entity';
import { selectEntities } from './entity-select';

/** Entities read with plain SQL are the entities TypeORM reads, in the caller's transaction. */
describe('selectEntities (database)', () => {
  const db = useTestDatabase('entity_select');
  const byId = (runs: Run[]) => new Map(runs.map((run) => [run.id, run]));

  it('reads as TypeORM does: every column type, nulls, transformers, only the matching rows', async () => {
    const [full, bare] = [
      await insertRun(db.dataSource, db.teamId),
      await insertRun(db.dataSource, db.teamId),
    ];
    const other = await insertRun(db.dataSource, 'OtherTeam'.padEnd(22, '0'));
    const at = new Date('2026-12-04T21:50:01.234Z');
    const status = { message: 'done "quoted" ✓', error_code: 'budget_exceeded', retryable: false };
    await db.dataSource.getRepository(Run).update(full, {
      config: { model_id: 'm', mcp_servers: { a: { url: 'https://x', headers: { k: 'v' } } } },
      modelId: 'm',
      skillSpec: 'team/repo:skill',
      agentSkill: { name: 'skill', description: 'd' } as Run['agentSkill'],
      scheduleInfo: { schedule_id: 's', cron_schedule: '* * * * *' } as Run['scheduleInfo'],
      statusMessage: status as Run['statusMessage'],
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
    const read = await selectEntities(db.dataSource, Run, {
      where: 'id IN (?) AND team_id = ?',
      params: [ids, db.teamId],
      orderBy: 'id DESC',
    });
    const orm = await db.dataSource.getRepository(Run).findBy({ id: In(ids), teamId: db.teamId });
    expect(read.map((run) => run.id)).toEqual([full, bare].sort().reverse());
    expect(read.every((run) => run instanceof Run)).toBe(true);
    expect(byId(read)).toEqual(byId(orm));
    const filled = byId(read).get(full)!;
    expect(filled.maxCostUsd).toBe(12.345678);
    expect(filled.runTimeMs).toBe(9_007_199_254);
    expect(filled.atCapacity).toBe(true);
    expect(filled.finishedAt).toEqual(at);
    expect(filled.statusMessage).toEqual(status);
    expect(byId(read).get(bare)!.maxCostUsd).toBeNull();
  });

  it("reads in the caller's transaction when given its manager", async () => {
    const id = await insertRun(db.dataSource, db.teamId);
    const titled = (manager?: EntityManager) =>
      selectEntities(db.dataSource, Run, {
        where: 'id = ? AND title = ?',
        params: [id, 'renamed, not committed'],
        manager,
      });
    const seen = await db.dataSource
      .transaction(async (manager) => {
        await manager.query('UPDATE runs SET title = ? WHERE id = ?', [
          'renamed, not committed',
          id,
        ]);
        const result = { inside: (await titled(manager)).length, outside: (await titled()).length };
        throw Object.assign(new Error('roll back'), { result });
      })
      .catch((err: { result?: unknown }) => err.result);
    expect(seen).toEqual({ inside: 1, outside: 0 });
    expect(await titled()).toEqual([]);
  });

  it('fails as TypeORM reads fail: a QueryFailedError with the code, naming its callers', async () => {
    async function readingTheMissingColumn() {
      const runs = await selectEntities(db.dataSource, Run, {
        where: 'no_such_column = ?',
        params: [1],
      });
      return runs;
    }
    const error = (await readingTheMissingColumn().catch(
      (err: unknown) => err,
    )) as QueryFailedError;
    expect(error).toBeInstanceOf(QueryFailedError);
    expect(error).toMatchObject({ code: 'ER_BAD_FIELD_ERROR', parameters: [1] });
    expect(error.message).toMatch(/^Unknown column 'no_such_column'/);
    expect(error.stack).toContain('readingTheMissingColumn');
  });
});
