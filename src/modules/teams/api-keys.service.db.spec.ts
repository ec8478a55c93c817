import { ApiKeyRoles1763925000000 } from '../../../migrations/1763925000000-api-key-roles';
import { useTestDatabase } from '../../../test/support/unit/test-database';
import { ApiKeyRepository } from './api-key.repository';
import { ApiKeysService } from './api-keys.service';
import { UserDirectoryService } from './auth/user-directory.service';
import { TeamsService } from './teams.service';
import { TeamUserRepository } from './team-user.repository';

/** Keys, their roles and the people strategies sign in, on a real database. */
describe('API key roles (database)', () => {
  const db = useTestDatabase('key_roles');
  const user = async (type: 'user' | 'service_account', role: 'admin' | 'member') => {
    const id = `U${type.slice(0, 1)}${role}${Math.random().toString(36).slice(2)}`.slice(0, 22);
    await db.dataSource.query(
      `INSERT INTO users (id, team_id, display_name, type, role, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
      [id, db.teamId, id, type, role, new Date()],
    );
    return { id, teamId: db.teamId };
  };

  it('migrates every existing key of a person to admin, leaving agent and run-scoped keys without a role', async () => {
    const keys = new ApiKeysService(new ApiKeyRepository(db.dataSource));
    const person = await user('user', 'member');
    const agent = await user('service_account', 'member');
    const migration = new ApiKeyRoles1763925000000();
    const runner = db.dataSource.createQueryRunner();
    try {
      await migration.down(runner);
      // Keys as they were before roles (no role column).
      const insert = (id: string, userId: string, runId: string | null) =>
        runner.query(
          `INSERT INTO api_keys (id, team_id, user_id, name, prefix, secret_hash, created_at, run_id)
           VALUES (?, ?, ?, 'old', ?, ?, ?, ?)`,
          [id, db.teamId, userId, id.slice(0, 16), Buffer.alloc(32), new Date(), runId],
        );
      await insert('KeyOfAPerson0000000000', person.id, null);
      await insert('KeyOfAnAgent0000000000', agent.id, null);
      await insert('KeyOfARun0000000000000', person.id, '00000000-0000-4000-8000-000000000001');
      await migration.up(runner);
    } finally {
      await runner.release();
    }
    const rows = (await db.dataSource.query(
      `SELECT id, role, expires_at FROM api_keys WHERE name = 'old' ORDER BY id`,
    )) as { id: string; role: string | null; expires_at: Date | null }[];
    expect(rows).toEqual([
      { id: 'KeyOfAPerson0000000000', role: 'admin', expires_at: null },
      { id: 'KeyOfARun0000000000000', role: null, expires_at: null },
      { id: 'KeyOfAnAgent0000000000', role: null, expires_at: null },
    ]);
    expect((await keys.listPeopleKeys(db.teamId)).map((k) => k.id)).toContain(
      'KeyOfAPerson0000000000',
    );
  });

  it("acts with the key's role, else its user's; an expired key does not authenticate", async () => {
    const keys = new ApiKeysService(new ApiKeyRepository(db.dataSource));
    const admin = await user('user', 'admin');
    const viewer = await keys.create(admin, 'view', { role: 'viewer' });
    const inherited = await keys.create(admin, 'inherits');
    expect((await keys.authenticate(viewer.key))?.role).toBe('viewer');
    expect((await keys.authenticate(inherited.key))?.role).toBe('admin');
    const expiring = await keys.create(admin, 'soon', {
      role: 'member',
      expiresAt: new Date(Date.now() + 60_000),
    });
    expect((await keys.authenticate(expiring.key))?.role).toBe('member');
    await db.dataSource.query(`UPDATE api_keys SET expires_at = ? WHERE id = ?`, [
      new Date(Date.now() - 1),
      expiring.id,
    ]);
    expect(await keys.authenticate(expiring.key)).toBeNull();
    expect(await keys.stillValid([viewer.id, expiring.id])).toEqual(new Set([viewer.id]));
  });

  it('deletes run-scoped keys revoked before the cut-off, longest revoked first, and no other key', async () => {
    const keys = new ApiKeysService(new ApiKeyRepository(db.dataSource));
    const person = await user('user', 'member');
    const hour = 60 * 60 * 1000;
    const runKey = async (id: string, revokedHoursAgo: number | null) => {
      const key = await keys.createForRun({
        id,
        teamId: db.teamId,
        userId: person.id,
        runId: '00000000-0000-4000-8000-00000000dead',
        executionId: 1,
      });
      if (revokedHoursAgo !== null) {
        await db.dataSource.query(`UPDATE api_keys SET revoked_at = ? WHERE id = ?`, [
          new Date(Date.now() - revokedHoursAgo * hour),
          id,
        ]);
      }
      return key;
    };
    await runKey('RunKeyRevoked3DaysAgo0', 72);
    await runKey('RunKeyRevoked2DaysAgo0', 48);
    await runKey('RunKeyRevokedAnHourAgo', 1);
    const live = await runKey('RunKeyStillLive000000', null);
    const own = await keys.create(person, 'own');
    await db.dataSource.query(`UPDATE api_keys SET revoked_at = ? WHERE id = ?`, [
      new Date(Date.now() - 72 * hour),
      own.id,
    ]);
    const ids = async () =>
      (
        (await db.dataSource.query(`SELECT id FROM api_keys WHERE user_id = ? ORDER BY id`, [
          person.id,
        ])) as { id: string }[]
      ).map((row) => row.id);
    const dayAgo = new Date(Date.now() - 24 * hour);

    expect(await keys.deleteRevokedRunKeys(dayAgo, 1)).toBe(1);
    expect(await ids()).not.toContain('RunKeyRevoked3DaysAgo0');
    expect(await ids()).toContain('RunKeyRevoked2DaysAgo0');
    expect(await keys.deleteRevokedRunKeys(dayAgo, 500)).toBe(1);
    expect(await keys.deleteRevokedRunKeys(dayAgo, 500)).toBe(0);
    expect(await ids()).toEqual([own.id, 'RunKeyRevokedAnHourAgo', 'RunKeyStillLive000000'].sort());
    expect((await keys.authenticate(live))?.runId).toBe('00000000-0000-4000-8000-00000000dead');
  });

  it('signs a person in once per team and email, keeping role and name up to date', async () => {
    const directory = new UserDirectoryService(
      db.dataSource,
      new TeamUserRepository(db.dataSource),
    );
    const team = await new TeamsService(new TeamUserRepository(db.dataSource)).createTeam(
      'directory-team',
    );
    const first = { team: team.name, email: 'Ada@Example.com', role: 'member' as const };
    const [a, b] = await Promise.all([directory.principalOf(first), directory.principalOf(first)]);
    expect(a).toMatchObject({ teamId: team.id, role: 'member', email: 'ada@example.com' });
    expect(b?.userId).toBe(a?.userId);
    expect(a?.keyId).toBe(`user:${a?.userId}`);
    const promoted = await directory.principalOf({ ...first, role: 'admin', displayName: 'Ada' });
    expect(promoted).toMatchObject({ userId: a?.userId, role: 'admin', displayName: 'Ada' });
    const [row] = (await db.dataSource.query(`SELECT role, display_name FROM users WHERE id = ?`, [
      a?.userId,
    ])) as { role: string; display_name: string }[];
    expect(row).toEqual({ role: 'admin', display_name: 'Ada' });
    expect(await directory.principalOf({ ...first, team: 'no-such-team' })).toBeNull();
    await expect(
      directory.principalOf({ ...first, role: 'owner' as unknown as 'admin' }),
    ).rejects.toThrow('unknown role "owner"');
  });
});
