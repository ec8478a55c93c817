import type { Principal } from '../../common/auth/principal';
import { callerType } from './me.controller';

describe('GET /me: what the caller is', () => {
  const principal = (fields: Partial<Principal>): Principal => ({
    teamId: 'team',
    userId: 'user',
    keyId: 'key',
    keyName: 'deploy-bot',
    userType: 'user',
    role: 'member',
    displayName: 'Ada',
    email: null,
    ...fields,
  });

  it("tells an agent identity's key from a person's, a run's and a session", () => {
    expect(callerType(principal({ userType: 'service_account' }))).toBe('agent');
    expect(callerType(principal({}))).toBe('api_key');
    expect(callerType(principal({ userType: 'service_account', runId: 'run-1' }))).toBe('run');
    expect(callerType(principal({ keyId: 'session:abc' }))).toBe('user');
  });
});
