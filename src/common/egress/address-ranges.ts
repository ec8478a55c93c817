import { cidrContains, embeddedIpv4, formatIp, IpAddress, parseCidr } from './ip-address';

/**
 * Blocks a connection made on a tenant's behalf may not reach unless the operator allow-lists
 * them: the host itself, its networks, cloud metadata (169.254.169.254, fd00:ec2::254) and
 * addresses that are no single public host.
 */
const REFUSED_RANGES: [string, string][] = [
  ['0.0.0.0/8', 'an unspecified address'],
  ['127.0.0.0/8', 'a loopback address'],
  ['10.0.0.0/8', 'a private address'],
  ['172.16.0.0/12', 'a private address'],
  ['192.168.0.0/16', 'a private address'],
  ['100.64.0.0/10', 'a shared (CGNAT) address'],
  ['169.254.0.0/16', 'a link-local address'],
  ['192.0.0.0/24', 'a reserved address'],
  ['198.18.0.0/15', 'a reserved address'],
  ['224.0.0.0/4', 'a multicast address'],
  ['240.0.0.0/4', 'a reserved address'],
  ['::/128', 'an unspecified address'],
  ['::1/128', 'a loopback address'],
  ['::/96', 'a reserved address'],
  ['100::/64', 'a reserved address'],
  ['64:ff9b:1::/48', 'a local-use NAT64 address'],
  ['fe80::/10', 'a link-local address'],
  ['fec0::/10', 'a site-local address'],
  ['fc00::/7', 'a unique-local address'],
  ['ff00::/8', 'a multicast address'],
];
const BLOCKS = REFUSED_RANGES.map(([cidr, kind]) => ({ block: parseCidr(cidr)!, kind }));

/**
 * Why `address` is refused ("a loopback address"; "an IPv4-mapped form of 127.0.0.1, a loopback
 * address" for IPv6 forms of an IPv4 address), or null for a public address.
 */
export function refusedRange(address: IpAddress): string | null {
  const embedded = embeddedIpv4(address);
  if (embedded) {
    const kind = refusedRange(embedded.ipv4);
    return kind && `${embedded.form} form of ${formatIp(embedded.ipv4)}, ${kind}`;
  }
  return BLOCKS.find(({ block }) => cidrContains(block, address))?.kind ?? null;
}
