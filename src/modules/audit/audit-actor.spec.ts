import type { Principal } from '../../common/auth/principal';
import { actorOf } from './audit-actor';

describe('actorOf', () => {
  const caller = (fields: Partial<Principal>): Principal => ({
    teamId: 'TeamActorSpec000000000',
    userId: 'UserActorSpec000000000',
    keyId: 'KeyActorSpec0000000000',
    userType: 'user',
    role: 'member',
    displayName: 'Ada',
    email: 'ada@example.com',
    strategy: 'api_key',
    ...fields,
  });
  const ada = { type: 'user', id: 'UserActorSpec000000000', name: 'Ada' };

  it('names an API key by its own name, on behalf of the person it belongs to', () => {
    expect(actorOf(caller({ keyName: 'ci-deploy' }))).toEqual({
      type: 'api_key',
      id: 'KeyActorSpec0000000000',
      name: 'ci-deploy',
      role: 'member',
      onBehalfOf: ada,
    });
  });

  it('names the credential of another strategy after that strategy when it has no name of its own', () => {
    const actor = actorOf(caller({ keyId: 'proxy-token:7f3a', strategy: 'corp-proxy' }));
    expect(actor).toEqual({
      type: 'api_key',
      id: 'proxy-token:7f3a',
      name: 'credential of the "corp-proxy" strategy',
      role: 'member',
      onBehalfOf: ada,
    });
  });

  it('keeps the name another strategy gave its credential', () => {
    const actor = actorOf(
      caller({ keyId: 'proxy-token:7f3a', keyName: 'build farm', strategy: 'corp-proxy' }),
    );
    expect(actor).toMatchObject({ id: 'proxy-token:7f3a', name: 'build farm' });
  });

  it('acts as the person for a strategy that vouches for one without a credential of its own', () => {
    const actor = actorOf(
      caller({ keyId: 'user:UserActorSpec000000000', strategy: 'corp-proxy', role: 'viewer' }),
    );
    expect(actor).toEqual({
      type: 'user',
      id: 'UserActorSpec000000000',
      name: 'Ada',
      role: 'viewer',
    });
  });

  it('acts as the run for a run-scoped key, an agent key on behalf of its identity', () => {
    expect(
      actorOf(
        caller({
          runId: 'RunActorSpec0000000000',
          keyName: 'run RunActorSpec0000000000 execution 1',
        }),
      ),
    ).toMatchObject({ type: 'run', id: 'RunActorSpec0000000000', onBehalfOf: ada });
    expect(
      actorOf(
        caller({ userType: 'service_account', displayName: 'Builder', keyName: 'builder key' }),
      ),
    ).toMatchObject({
      type: 'api_key',
      name: 'builder key',
      onBehalfOf: { type: 'agent', id: 'UserActorSpec000000000', name: 'Builder' },
    });
  });
});
