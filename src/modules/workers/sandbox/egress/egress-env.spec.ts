import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeEgressTrust } from './egress-env';

describe('writeEgressTrust', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'ambient-egress-env-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const ca = '-----BEGIN CERTIFICATE-----\nTHE-EXECUTION-CA\n-----END CERTIFICATE-----';

  it('writes the CA and a bundle of the system CAs plus it, and points every client at them', async () => {
    const env = await writeEgressTrust(ca, dir, '/run/ambient');
    expect(readFileSync(join(dir, 'egress-ca.pem'), 'utf8')).toBe(`${ca}\n`);
    const bundle = readFileSync(join(dir, 'ca-bundle.pem'), 'utf8');
    expect(bundle.endsWith(`${ca}\n`)).toBe(true);
    // The system's CAs come first: tunnelled hosts keep their usual trust.
    expect(bundle.split('BEGIN CERTIFICATE').length).toBeGreaterThan(10);
    expect(env).toEqual({
      HTTPS_PROXY: 'http://127.0.0.1:7172',
      HTTP_PROXY: 'http://127.0.0.1:7172',
      https_proxy: 'http://127.0.0.1:7172',
      http_proxy: 'http://127.0.0.1:7172',
      NO_PROXY: '127.0.0.1,localhost',
      no_proxy: '127.0.0.1,localhost',
      SSL_CERT_FILE: '/run/ambient/ca-bundle.pem',
      CURL_CA_BUNDLE: '/run/ambient/ca-bundle.pem',
      REQUESTS_CA_BUNDLE: '/run/ambient/ca-bundle.pem',
      GIT_SSL_CAINFO: '/run/ambient/ca-bundle.pem',
      NODE_EXTRA_CA_CERTS: '/run/ambient/egress-ca.pem',
    });
  });
});
