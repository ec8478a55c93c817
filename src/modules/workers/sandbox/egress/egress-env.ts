import { readFile, writeFile } from 'node:fs/promises';
import { posix, join } from 'node:path';
import { rootCertificates } from 'node:tls';
import { SANDBOX_PROXY_HOST, SANDBOX_PROXY_PORT } from '../../../../common/egress/egress-policy';

/** The execution CA's certificate in the sandbox's private directory (NODE_EXTRA_CA_CERTS). */
export const EGRESS_CA_FILE = 'egress-ca.pem';
/** The system's CA bundle plus the execution CA (SSL_CERT_FILE and the like). */
export const EGRESS_CA_BUNDLE_FILE = 'ca-bundle.pem';

/** Where the host keeps its CA bundle (Debian and derivatives, then Red Hat's). */
const SYSTEM_BUNDLES = ['/etc/ssl/certs/ca-certificates.crt', '/etc/pki/tls/certs/ca-bundle.crt'];

/**
 * Writes the execution CA and the bundle (the system's CAs plus it) into the private directory
 * (`hostDir`, seen inside at `insideDir`) and returns the variables every process of the sandbox
 * gets: the proxy for HTTP(S) (the API bridge on the loopback stays direct) and the CA files the
 * usual clients read (OpenSSL and curl, Python requests, git, Node). Both files go with the
 * private directory when the sandbox closes.
 */
export async function writeEgressTrust(
  caCertPem: string,
  hostDir: string,
  insideDir: string,
): Promise<Record<string, string>> {
  const ca = caCertPem.endsWith('\n') ? caCertPem : `${caCertPem}\n`;
  const bundle = `${await systemBundle()}\n${ca}`;
  await writeFile(join(hostDir, EGRESS_CA_FILE), ca, { mode: 0o644 });
  await writeFile(join(hostDir, EGRESS_CA_BUNDLE_FILE), bundle, { mode: 0o644 });
  return egressEnv(
    posix.join(insideDir, EGRESS_CA_FILE),
    posix.join(insideDir, EGRESS_CA_BUNDLE_FILE),
  );
}

/** The variables of a sandbox whose only way out is the egress proxy. */
export function egressEnv(caFile: string, bundleFile: string): Record<string, string> {
  const proxy = `http://${SANDBOX_PROXY_HOST}:${SANDBOX_PROXY_PORT}`;
  const direct = `${SANDBOX_PROXY_HOST},localhost`;
  return {
    HTTPS_PROXY: proxy,
    HTTP_PROXY: proxy,
    https_proxy: proxy,
    http_proxy: proxy,
    NO_PROXY: direct,
    no_proxy: direct,
    SSL_CERT_FILE: bundleFile,
    CURL_CA_BUNDLE: bundleFile,
    REQUESTS_CA_BUNDLE: bundleFile,
    GIT_SSL_CAINFO: bundleFile,
    NODE_EXTRA_CA_CERTS: caFile,
  };
}

/** The host's CA bundle; Node's own root certificates where the host has none. */
async function systemBundle(): Promise<string> {
  for (const path of SYSTEM_BUNDLES) {
    const text = await readFile(path, 'utf8').catch(() => null);
    if (text) return text.trimEnd();
  }
  return rootCertificates.join('\n');
}
