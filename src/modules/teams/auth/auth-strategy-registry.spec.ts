import { checkedExtension } from '../../../extensions/load-extensions';
import type { Principal } from '../../../common/auth/principal';
import { apiKeyStrategy, bearerTokenOf } from './api-key.strategy';
import type { AuthRequest, AuthStrategy } from './auth-strategy';
import { AuthStrategyRegistry } from './auth-strategy-registry';

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
    const registry = new AuthStrategyRegistry([
      { owner: 'ambient', strategy: byHeader('first', 'x-first') },
      { owner: 'ext', strategy: byHeader('second', 'x-second') },
    ]);
    expect(await registry.authenticate(request({ 'x-second': 'b', 'x-first': 'a' }))).toMatchObject(
      { userId: 'a', strategy: 'first' },
    );
    expect(await registry.authenticate(request({ 'x-second': 'b' }))).toMatchObject({
      userId: 'b',
      strategy: 'second',
    });
    expect(await registry.authenticate(request({}))).toBeNull();
    expect(registry.names).toEqual(['first', 'second']);
  });

  it('refuses a name registered twice, naming both extensions', () => {
    expect(
      () =>
        new AuthStrategyRegistry([
          { owner: 'ambient', strategy: byHeader('same', 'x-a') },
          { owner: 'corp-sso', strategy: byHeader('same', 'x-b') },
        ]),
    ).toThrow('extension corp-sso: auth strategy "same" is already registered by ambient');
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

describe('an extension registering auth strategies', () => {
  it('is checked at load: a list of named strategies with authenticate(), or a function', () => {
    expect(() => checkedExtension({ name: 'x', authStrategies: {} })).toThrow(
      '"authStrategies" must be a list or a function',
    );
    expect(() => checkedExtension({ name: 'x', authStrategies: [{ name: 'Bad Name' }] })).toThrow(
      'an auth strategy needs a name of 1-64 lower-case letters',
    );
    expect(() => checkedExtension({ name: 'x', authStrategies: [{ name: 'ok' }] })).toThrow(
      'auth strategy "ok" has no authenticate()',
    );
    expect(checkedExtension({ name: 'x', authStrategies: () => [] }).name).toBe('x');
  });
});
