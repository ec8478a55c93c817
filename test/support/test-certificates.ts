import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A test CA (`<dir>/ca.pem`, the file a client or the egress proxy is told to trust) and a server
 * certificate it signed for the IP addresses `ips`, made with openssl in `dir`.
 */
export function serverCertificateFor(
  dir: string,
  ips: string[],
): { caFile: string; key: string; cert: string } {
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(
    'req',
    '-x509',
    ...ec,
    '-days',
    '2',
    '-subj',
    '/CN=Test CA',
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
  );
  openssl('req', ...ec, '-subj', '/CN=server', '-keyout', 'server.key', '-out', 'server.csr');
  const names = ips.map((ip) => `IP:${ip}`).join(',');
  writeFileSync(join(dir, 'ext.cnf'), `subjectAltName=${names}\nextendedKeyUsage=serverAuth\n`);
  openssl(
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '2',
    '-out',
    'server.pem',
    '-extfile',
    'ext.cnf',
  );
  return {
    caFile: join(dir, 'ca.pem'),
    key: readFileSync(join(dir, 'server.key'), 'utf8'),
    cert: readFileSync(join(dir, 'server.pem'), 'utf8'),
  };
}
