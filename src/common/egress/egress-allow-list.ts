import { Cidr, cidrContains, embeddedIpv4, IpAddress, parseCidr } from './ip-address';

type AllowEntry =
  | { kind: 'block'; cidr: Cidr; port?: number }
  | { kind: 'host'; host: string; wildcard: boolean; port?: number };

const HOST = /^(\*\.)?[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$/;

/**
 * AMBIENT_EGRESS_ALLOW: what the operator lets connections made on a tenant's behalf reach
 * although it is loopback, private, link-local… Comma-separated entries, each a block
 * (`10.0.0.0/8`, `fd00::/8`) or an address (`127.0.0.1`, `::1`), either with an optional port
 * (`127.0.0.1:8080`, `[::1]:8080`, `10.0.0.0/8:443`), or a host name with an optional port (`mcp.internal`,
 * `mcp.internal:8443`, `*.corp.example`: any name under corp.example).
 */
export class EgressAllowList {
  private constructor(private readonly entries: AllowEntry[]) {}

  static readonly none = new EgressAllowList([]);

  /** Throws an Error naming the entry that is none of the forms above. */
  static parse(text: string | undefined): EgressAllowList {
    const entries = (text ?? '')
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean)
      .map(parseEntry);
    return new EgressAllowList(entries);
  }

  get empty(): boolean {
    return this.entries.length === 0;
  }

  /** Whether `host` (as the URL names it), resolved to `address`, may be reached on `port`. */
  allows(host: string, address: IpAddress, port: number): boolean {
    const ipv4 = embeddedIpv4(address)?.ipv4;
    return this.entries.some((entry) => {
      if (entry.port !== undefined && entry.port !== port) return false;
      if (entry.kind === 'block') {
        return cidrContains(entry.cidr, address) || (ipv4 && cidrContains(entry.cidr, ipv4));
      }
      const name = host.toLowerCase().replace(/\.$/, '');
      return entry.wildcard ? name.endsWith(`.${entry.host}`) : name === entry.host;
    });
  }
}

function parseEntry(entry: string): AllowEntry {
  const cidr = parseCidr(entry);
  if (cidr) return { kind: 'block', cidr };
  const withPort = /^(\[[^\]]+\]|[^:[\]]+):(\d{1,5})$/.exec(entry);
  const hostPart = withPort ? withPort[1] : entry;
  const port = withPort ? Number(withPort[2]) : undefined;
  if (port !== undefined && (port < 1 || port > 65535)) throw badEntry(entry);
  const block = parseCidr(hostPart.replace(/^\[(.*)\]$/, '$1'));
  if (block) return { kind: 'block', cidr: block, port };
  const host = hostPart.toLowerCase().replace(/\.$/, '');
  if (!HOST.test(host)) throw badEntry(entry);
  const wildcard = host.startsWith('*.');
  return { kind: 'host', host: wildcard ? host.slice(2) : host, wildcard, port };
}

function badEntry(entry: string): Error {
  return new Error(
    `"${entry}" is not a block (10.0.0.0/8), an address (127.0.0.1, [::1]:8080) or a host[:port] (mcp.internal:8443, *.corp.example)`,
  );
}
