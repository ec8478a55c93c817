import type { Principal } from '../../../common/auth/principal';
import { apiKeyStrategy, bearerTokenOf } from './api-key.strategy';
import type { AuthRequest, AuthStrategy } from './auth-strategy';
import { AuthStrategyRegistry, checkAuthStrategy } from './auth-strategy-registry';

const principal = (userId: string): Principal => ({
  teamId: 'team',
  userId,
  keyId: `user:${userId}`,
  userType: 'user',
  role: 'viewer',
  displayName: userId,
  email: null,
});
const request = (headers: AuthRequest['headers']): AuthRequest => ({
  method: 'GET',
  path: '/api/v1/agent/runs',
  headers,
});
const byHeader = (name: string, header: string): AuthStrategy => ({
  name,
  authenticate: (req) => {
    const value = req.headers[header];
    return Promise.resolve(typeof value === 'string' ? principal(value) : null);
  },
});

describe('AuthStrategyRegistry', () => {
  it('asks the strategies in order; the first that answers wins and is named on the principal', async () => {
    const registry = new AuthStrategyRegistry()
      .register('ambient', byHeader('first', 'x-first'))
      .register('ext', byHeader('second', 'x-second'));
    expect(await registry.authenticate(request({ 'x-second': 'b', 'x-first': 'a' }))).toMatchObject(
      { userId: 'a', strategy: 'first' },
    );
    expect(await registry.authenticate(request({ 'x-second': 'b' }))).toMatchObject({
      userId: 'b',
      strategy: 'second',
    });
    expect(await registry.authenticate(request({}))).toBeNull();
    expect(registry.names()).toEqual(['first', 'second']);
  });

  it('refuses a name registered twice, naming both extensions', () => {
    const registry = new AuthStrategyRegistry().register('ambient', byHeader('same', 'x-a'));
    expect(() => registry.register('corp-sso', byHeader('same', 'x-b'))).toThrow(
      'extension corp-sso: auth strategy "same" is already registered by ambient',
    );
  });

  it('checks each strategy: a name of lower-case letters, digits, "_", "." or "-", and authenticate()', () => {
    expect(() => checkAuthStrategy({ name: 'Bad Name' })).toThrow(
      'an auth strategy needs a name of 1-64 lower-case letters',
    );
    expect(() => checkAuthStrategy({ name: 'ok' })).toThrow(
      'auth strategy "ok" has no authenticate()',
    );
    expect(() =>
      new AuthStrategyRegistry().registerAll(
        [{ owner: 'corp-sso', entries: () => [{ name: 'ok' } as AuthStrategy] }],
        {} as never,
      ),
    ).toThrow('extension corp-sso: auth strategy "ok" has no authenticate()');
  });
});

describe('the api_key strategy', () => {
  it('reads "Authorization: Bearer <key>" like passport-http-bearer did, and nothing else', async () => {
    expect(bearerTokenOf(request({ authorization: 'Bearer k1' }))).toBe('k1');
    expect(bearerTokenOf(request({ authorization: 'bearer k1' }))).toBe('k1');
    for (const authorization of ['Basic k1', 'Bearer', 'Bearer  k1', 'Bearer k1 k2', undefined]) {
      expect(bearerTokenOf(request({ authorization }))).toBeNull();
    }
    const seen: string[] = [];
    const strategy = apiKeyStrategy({
      apiKeys: {
        authenticate: (key) => {
          seen.push(key);
          return Promise.resolve(principal('keyed'));
        },
      },
    });
    expect(await strategy.authenticate(request({}))).toBeNull();
    expect(await strategy.authenticate(request({ authorization: 'Bearer k2' }))).toMatchObject({
      userId: 'keyed',
    });
    expect(seen).toEqual(['k2']);
  });
});
