import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { refusedRange } from './address-ranges';
import { EgressAllowList } from './egress-allow-list';
import { formatIp, parseIp } from './ip-address';

/** The setting that allow-lists what the guard refuses by default (named in every refusal). */
export const EGRESS_ALLOW_SETTING = 'AMBIENT_EGRESS_ALLOW';

/** A connection the egress policy does not allow; the message is safe to show the tenant. */
export class EgressRefusedError extends Error {
  override readonly name = 'EgressRefusedError';
}

/** Every address a name resolves to, in the resolver's order. */
export type Resolver = (host: string) => Promise<{ address: string; family: number }[]>;

const systemResolver: Resolver = (host) => dnsLookup(host, { all: true, verbatim: true });

/** A host:port that passed the policy, and the one address a connection to it must use. */
export interface CheckedTarget {
  /** The host as the URL names it (lower case, no brackets or trailing dot). */
  host: string;
  port: number;
  address: string;
  family: 4 | 6;
}

/**
 * The one egress policy for connections the service makes on a tenant's behalf (MCP `url`
 * servers, factory repositories): resolves the name, refuses loopback, private, link-local
 * (cloud metadata), unique-local, multicast and reserved addresses unless AMBIENT_EGRESS_ALLOW
 * lists them, and hands out the checked address so the connection uses it and nothing a second
 * resolution (DNS rebinding) would answer.
 */
export class EgressGuard {
  constructor(
    readonly allowList: EgressAllowList = EgressAllowList.none,
    private readonly resolve: Resolver = systemResolver,
  ) {}

  /** The guard of AMBIENT_EGRESS_ALLOW's value (already validated by loadConfig). */
  static fromSetting(allow: string | undefined, resolve?: Resolver): EgressGuard {
    return new EgressGuard(EgressAllowList.parse(allow), resolve);
  }

  /**
   * Resolves `host` and checks every address it names; throws EgressRefusedError when any is
   * refused (a name that points inside is refused whole) or when it does not resolve.
   */
  async check(host: string, port: number): Promise<CheckedTarget> {
    const name = host
      .replace(/^\[(.*)\]$/, '$1')
      .replace(/\.$/, '')
      .toLowerCase();
    if (!name) throw new EgressRefusedError('egress refused: the URL names no host');
    const literal = parseIp(name);
    if (literal) {
      const why = this.allowList.allows(name, literal, port) ? null : refusedRange(literal);
      if (why) throw refusal(`${formatIp(literal)} is ${why}`);
      return { host: name, port, address: formatIp(literal), family: literal.family };
    }
    let answers: { address: string; family: number }[];
    try {
      answers = await this.resolve(name);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'no answer';
      throw new EgressRefusedError(`egress refused: cannot resolve ${name} (${code})`);
    }
    const addresses = answers.map((answer) => parseIp(answer.address));
    if (addresses.length === 0 || addresses.some((address) => !address)) {
      throw new EgressRefusedError(`egress refused: cannot resolve ${name} (no address)`);
    }
    for (const address of addresses) {
      const why = this.allowList.allows(name, address!, port) ? null : refusedRange(address!);
      // The address itself is not named: it would tell the tenant the host's internal DNS.
      if (why) throw refusal(`${name} resolves to ${why.replace(/ form of [^,]+,/, ' form of')}`);
    }
    return { host: name, port, address: formatIp(addresses[0]!), family: addresses[0]!.family };
  }
}

function refusal(what: string): EgressRefusedError {
  return new EgressRefusedError(`egress refused: ${what} (${EGRESS_ALLOW_SETTING})`);
}

/**
 * A `lookup` for node:net / node:http(s) that answers only the checked address, so the socket
 * connects where the policy looked (TLS still verifies the certificate against the host name).
 */
export function pinnedLookup(target: CheckedTarget): LookupFunction {
  return (hostname, options, callback) => {
    const name = hostname.replace(/\.$/, '').toLowerCase();
    if (name !== target.host) {
      const err: NodeJS.ErrnoException = new EgressRefusedError(
        `egress refused: ${name} was not checked`,
      );
      err.code = 'EEGRESS';
      callback(err, '', 0);
      return;
    }
    if (options.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
}
