import { EgressGuard } from '../../common/egress/egress-guard';
import { endpointUrlProblem } from './endpoint-url';

describe('endpointUrlProblem', () => {
  const answers: Record<string, string> = {
    'hooks.example.com': '93.184.216.34',
    'internal.example.com': '10.1.2.3',
    'ci.internal': '10.9.9.9',
  };
  const resolve = (host: string) =>
    answers[host]
      ? Promise.resolve([{ address: answers[host], family: 4 }])
      : Promise.reject(Object.assign(new Error('no such host'), { code: 'ENOTFOUND' }));
  const guard = EgressGuard.fromSetting('ci.internal:8080', resolve);

  it('accepts https to a public host', async () => {
    expect(await endpointUrlProblem(guard, 'https://hooks.example.com/ambient')).toBeNull();
  });

  it('accepts http only to a host the allow list names', async () => {
    expect(await endpointUrlProblem(guard, 'http://ci.internal:8080/hook')).toBeNull();
    expect(await endpointUrlProblem(guard, 'http://hooks.example.com/ambient')).toMatch(
      /^must be an https URL/,
    );
  });

  it('refuses private addresses, other schemes, credentials and names that do not resolve', async () => {
    expect(await endpointUrlProblem(guard, 'https://internal.example.com/')).toMatch(
      /egress refused: internal.example.com resolves to a private/,
    );
    expect(await endpointUrlProblem(guard, 'https://ci.internal:9090/')).toMatch(/egress refused/);
    expect(await endpointUrlProblem(guard, 'ftp://hooks.example.com/')).toBe(
      'must be an https URL',
    );
    expect(await endpointUrlProblem(guard, 'https://u:p@hooks.example.com/')).toBe(
      'must not contain credentials',
    );
    expect(await endpointUrlProblem(guard, 'https://nowhere.example/')).toMatch(/cannot resolve/);
    expect(await endpointUrlProblem(guard, 'hooks.example.com')).toBe(
      'must be an absolute http(s) URL',
    );
  });
});
