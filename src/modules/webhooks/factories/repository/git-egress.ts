import { EgressGuard, EgressRefusedError } from '../../../../common/egress/egress-guard';
import { shellQuote } from '../../../../common/git';

/** How one git command reaches a remote the egress policy checked. */
export interface PinnedRemote {
  /** The URL to give git (ssh:// and git:// name the checked address). */
  url: string;
  /** `-c` settings for the command. */
  configs: string[];
  env: Record<string, string>;
}

const SCP_LIKE = /^([^@/]+@)(\[[^\]]+\]|[^:/[\]]+):(.*)$/s;

/**
 * Checks a tenant's repository URL with the egress guard right before a git command and pins
 * that command to the checked address: curl's resolve list for http(s) (TLS still verifies the
 * host name), `HostName` for ssh (host keys still looked up under the name), the address itself
 * for git://. Redirects are not followed (they would go unchecked). Local paths (`file`, allowed
 * only by the operator's AMBIENT_FACTORY_REPOSITORY_PROTOCOLS) make no connection.
 */
export async function pinnedRemote(
  url: string,
  protocol: string | null,
  guard: EgressGuard,
): Promise<PinnedRemote> {
  if (protocol === 'file') return { url, configs: [], env: {} };
  if (protocol === 'http' || protocol === 'https') return pinnedHttp(url, protocol, guard);
  if (protocol === 'ssh') return pinnedSsh(url, guard);
  if (protocol === 'git') {
    const parsed = parseUrl(url);
    const target = await guard.check(parsed.hostname, Number(parsed.port) || 9418);
    parsed.hostname = bracketed(target.address, target.family);
    return { url: parsed.toString(), configs: [], env: {} };
  }
  throw new EgressRefusedError(
    `egress refused: connections over the ${protocol ?? 'unknown'} transport cannot be checked`,
  );
}

async function pinnedHttp(url: string, protocol: string, guard: EgressGuard) {
  const parsed = parseUrl(url);
  const port = Number(parsed.port) || (protocol === 'https' ? 443 : 80);
  const target = await guard.check(parsed.hostname, port);
  const configs = ['http.followRedirects=false'];
  if (target.address !== target.host) {
    configs.push(
      `http.curloptResolve=${target.host}:${port}:${bracketed(target.address, target.family)}`,
    );
  }
  // git gets the URL as it was checked (`https://2130706433/` is `https://127.0.0.1/`), so curl
  // cannot read its host differently.
  return { url: parsed.href, configs, env: {} };
}

async function pinnedSsh(url: string, guard: EgressGuard): Promise<PinnedRemote> {
  let host: string;
  let port = 22;
  if (/^[a-z+]+:\/\//i.test(url)) {
    const parsed = parseUrl(url);
    host = parsed.hostname;
    port = Number(parsed.port) || 22;
  } else {
    const scp = SCP_LIKE.exec(url);
    if (!scp) throw new EgressRefusedError('egress refused: the ssh URL names no host');
    host = scp[2];
  }
  const target = await guard.check(host, port);
  if (!/^[a-z0-9._:-]+$/.test(target.host)) {
    throw new EgressRefusedError('egress refused: the ssh host name is not a plain name');
  }
  // The name stays on ssh's command line (its ~/.ssh/config Host blocks still apply); the
  // connection goes to the checked address and the host key is verified under the name.
  const command = [
    'ssh',
    '-o',
    shellQuote(`HostName=${target.address}`),
    '-o',
    shellQuote(`HostKeyAlias=${target.host}`),
  ].join(' ');
  return { url, configs: [], env: { GIT_SSH_COMMAND: command, GIT_SSH_VARIANT: 'ssh' } };
}

function parseUrl(url: string): URL {
  try {
    return new URL(url);
  } catch {
    throw new EgressRefusedError('egress refused: the URL cannot be read');
  }
}

function bracketed(address: string, family: 4 | 6): string {
  return family === 6 ? `[${address}]` : address;
}
