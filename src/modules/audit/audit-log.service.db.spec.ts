import { getDataSourceToken } from '@nestjs/typeorm';
import { newTestService } from '../../../test/support/unit/new-test-service';
import { useTestDatabase } from '../../../test/support/unit/test-database';
import { ApiError } from '../../common/errors/api-error';
import { withRequestContext } from '../../common/request-context';
import type { Principal } from '../../common/auth/principal';
import { SYSTEM_ACTOR } from './audit-actor';
import { AuditEvent } from './audit-event.entity';
import { AuditLog } from './audit-log.service';

/** The audit writer on a real database: an event commits with its change or not at all. */
describe('AuditLog (database)', () => {
  const db = useTestDatabase('audit');
  let audit: AuditLog;

  beforeEach(async () => {
    audit = (
      await newTestService(AuditLog, [{ provide: getDataSourceToken(), useValue: db.dataSource }])
    ).sut;
    await db.dataSource.query(`DELETE FROM audit_events`);
  });

  const principal = (fields: Partial<Principal> = {}): Principal => ({
    teamId: db.teamId,
    userId: 'UserAuditSpec000000000',
    keyId: 'KeyAuditSpec0000000000',
    userType: 'user',
    role: 'admin',
    keyName: 'deploy-bot',
    displayName: 'Ada',
    email: null,
    ...fields,
  });
  const events = () =>
    db.dataSource.getRepository(AuditEvent).find({ order: { occurredAt: 'ASC', id: 'ASC' } });

  it('writes the event with the change, carrying the request id and address of the request', async () => {
    await withRequestContext({ requestId: 'req-audit-1', ip: '10.0.0.7' }, () =>
      db.dataSource.transaction((manager) =>
        audit.record(
          manager,
          principal(),
          'secret.update',
          { type: 'secret', id: 'TOKEN' },
          {
            value_changed: true,
          },
        ),
      ),
    );
    expect(await events()).toEqual([
      expect.objectContaining({
        teamId: db.teamId,
        actorType: 'api_key',
        actorId: 'KeyAuditSpec0000000000',
        actorName: 'deploy-bot',
        actorRole: 'admin',
        onBehalfOfType: 'user',
        onBehalfOfId: 'UserAuditSpec000000000',
        onBehalfOfName: 'Ada',
        action: 'secret.update',
        targetType: 'secret',
        targetId: 'TOKEN',
        outcome: 'success',
        requestId: 'req-audit-1',
        ip: '10.0.0.7',
        details: { value_changed: true },
      }),
    ]);
  });

  it('leaves no event when the change fails after the event was written', async () => {
    await expect(
      db.dataSource.transaction(async (manager) => {
        await audit.record(manager, principal(), 'run.cancel', { type: 'run', id: 'r1' });
        throw new Error('the change failed after its event');
      }),
    ).rejects.toThrow('the change failed after its event');
    expect(await events()).toEqual([]);
  });

  it("names the actor by what the key stands for: a run (by its key), an agent's key, the system", async () => {
    await db.dataSource.transaction(async (manager) => {
      await audit.record(
        manager,
        principal({ runId: 'run-1', keyName: 'run run-1 execution 1' }),
        'score.report',
        null,
      );
      await audit.record(
        manager,
        principal({
          userType: 'service_account',
          userId: 'Agent00000000000000000',
          keyId: 'AgentKey00000000000000',
          keyName: 'nightly-triage',
          displayName: 'Triage bot',
          role: 'member',
        }),
        'run.create',
        null,
      );
      await audit.record(manager, { teamId: db.teamId, actor: SYSTEM_ACTOR }, 'team.create', null);
    });
    expect(
      (await events()).map((e) => [
        e.actorType,
        e.actorId,
        e.actorName,
        e.onBehalfOfType,
        e.onBehalfOfId,
        e.onBehalfOfName,
      ]),
    ).toEqual(
      expect.arrayContaining([
        ['run', 'run-1', 'run run-1 execution 1', 'user', 'UserAuditSpec000000000', 'Ada'],
        [
          'api_key',
          'AgentKey00000000000000',
          'nightly-triage',
          'agent',
          'Agent00000000000000000',
          'Triage bot',
        ],
        ['system', 'system', 'Ambient', null, null, null],
      ]),
    );
  });

  it('records a refused attempt on its own, and only a refusal', async () => {
    const target = { type: 'secret', id: 'TOKEN' };
    await expect(
      audit.deniedOn(principal({ role: 'member' }), 'secret.delete', target, () => {
        throw new ApiError('not_authorized', 'only the creator may delete it');
      }),
    ).rejects.toMatchObject({ code: 'not_authorized' });
    await expect(
      audit.deniedOn(principal(), 'secret.delete', target, () => {
        throw ApiError.notFound('secret "TOKEN"');
      }),
    ).rejects.toMatchObject({ code: 'resource_not_found' });
    expect(await audit.deniedOn(principal(), 'secret.delete', target, () => 'done')).toBe('done');
    expect(await events()).toEqual([
      expect.objectContaining({
        action: 'secret.delete',
        outcome: 'denied',
        actorRole: 'member',
        details: { reason: 'only the creator may delete it' },
      }),
    ]);
  });
});
