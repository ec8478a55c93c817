import type { BoundSecret } from '../../../../common/egress/egress-policy';
import { basicFromUserinfo, injectIntoHeaders } from './secret-injection';

const secret = (name: string, value: string): BoundSecret => ({
  name,
  placeholder: `ambient-placeholder-${name}`,
  value,
  hosts: ['example.com'],
});
const TOKEN = secret('TOKEN', 'ghp_value');
const KEY = secret('KEY', 'sk-value');
const basic = (credentials: string) => `Basic ${Buffer.from(credentials).toString('base64')}`;

describe('injectIntoHeaders', () => {
  it('replaces every placeholder of every secret in header values, never in names', () => {
    expect(
      injectIntoHeaders(
        [
          'Authorization',
          `Bearer ${TOKEN.placeholder}`,
          'X-Keys',
          `${KEY.placeholder},${KEY.placeholder}`,
          TOKEN.placeholder,
          'name is not touched',
        ],
        [TOKEN, KEY],
      ),
    ).toEqual([
      'Authorization',
      'Bearer ghp_value',
      'X-Keys',
      'sk-value,sk-value',
      TOKEN.placeholder,
      'name is not touched',
    ]);
  });

  it('re-encodes Basic credentials that hold a placeholder, and leaves other ones as they are', () => {
    expect(
      injectIntoHeaders(['authorization', basic(`x-access-token:${TOKEN.placeholder}`)], [TOKEN]),
    ).toEqual(['authorization', basic('x-access-token:ghp_value')]);
    const unrelated = ['Authorization', basic('user:password')];
    expect(injectIntoHeaders(unrelated, [TOKEN])).toBe(unrelated);
  });

  it('changes nothing without secrets', () => {
    const headers = ['Authorization', `Bearer ${TOKEN.placeholder}`];
    expect(injectIntoHeaders(headers, [])).toBe(headers);
  });
});

describe('basicFromUserinfo', () => {
  it('turns URL userinfo into Basic credentials with placeholders replaced', () => {
    const url = new URL(`http://x-access-token:${TOKEN.placeholder}@example.com/repo.git`);
    expect(basicFromUserinfo(url, [TOKEN])).toBe(basic('x-access-token:ghp_value'));
    expect(basicFromUserinfo(new URL('http://us%40er:p%3Ass@example.com/'), [])).toBe(
      basic('us@er:p:ss'),
    );
    expect(basicFromUserinfo(new URL('http://example.com/'), [TOKEN])).toBeNull();
    expect(basicFromUserinfo(new URL('http://user:100%zz@example.com/'), [])).toBe(
      basic('user:100%zz'),
    );
  });
});
