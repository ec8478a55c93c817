import type { Principal } from '../../../common/auth/principal';
import { ApiError } from '../../../common/errors/api-error';
import type { AuthRequest } from '../auth/auth-strategy';
import { cookiesOf } from './session-cookies';
import { sessionStrategy } from './session.strategy';

const principal: Principal = {
  teamId: 't',
  userId: 'u',
  keyId: 'user:u',
  userType: 'user',
  role: 'member',
  displayName: 'Mia',
  email: null,
};
const strategy = sessionStrategy({
  sessions: {
    principalOf: (token) =>
      Promise.resolve(
        token === 'live' ? { principal, csrfToken: 'csrf-1', expiresAt: new Date() } : null,
      ),
  },
});
const request = (method: string, headers: AuthRequest['headers']): AuthRequest => ({
  method,
  path: '/api/v1/agent/runs',
  headers,
});

describe('the session strategy', () => {
  it('recognises a live session cookie on reads, and nothing else', async () => {
    expect(await strategy.authenticate(request('GET', { cookie: 'ambient_session=live' }))).toBe(
      principal,
    );
    expect(
      await strategy.authenticate(request('GET', { cookie: 'ambient_session=gone' })),
    ).toBeNull();
    expect(await strategy.authenticate(request('POST', {}))).toBeNull();
  });

  it('refuses a change without the CSRF token with 403, and lets it through with it', async () => {
    for (const token of [undefined, 'csrf-2', 'csrf-1x']) {
      const refused = strategy.authenticate(
        request('DELETE', {
          cookie: 'ambient_session=live',
          ...(token ? { 'x-csrf-token': token } : {}),
        }),
      );
      await expect(refused).rejects.toBeInstanceOf(ApiError);
      await expect(refused).rejects.toMatchObject({ status: 403, code: 'not_authorized' });
    }
    const allowed = request('PATCH', { cookie: 'ambient_session=live', 'x-csrf-token': 'csrf-1' });
    expect(await strategy.authenticate(allowed)).toBe(principal);
  });

  it('reads cookies as browsers send them: first of a name wins, bad escapes skipped', () => {
    const cookies = cookiesOf({ cookie: 'a=1; ambient_session=x%20y; a=2; bad=%E0%A4%A; =v' });
    expect([...cookies]).toEqual([
      ['a', '1'],
      ['ambient_session', 'x y'],
    ]);
  });
});
