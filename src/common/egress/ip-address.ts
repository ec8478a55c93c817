import { isIPv4, isIPv6 } from 'node:net';

/** An IPv4 (4 bytes) or IPv6 (16 bytes) address. */
export interface IpAddress {
  family: 4 | 6;
  bytes: Uint8Array;
}

/** An address block: the addresses whose first `bits` bits are those of `base`. */
export interface Cidr {
  base: IpAddress;
  bits: number;
}

/** The address `text` names (brackets and an IPv6 zone allowed), or null when it is not one. */
export function parseIp(text: string): IpAddress | null {
  const bare = text.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, '');
  if (isIPv4(bare)) return { family: 4, bytes: Uint8Array.from(bare.split('.').map(Number)) };
  if (!isIPv6(bare)) return null;
  return { family: 6, bytes: ipv6Bytes(bare) };
}

function ipv6Bytes(text: string): Uint8Array {
  let groups = text;
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(groups);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number);
    groups = `${groups.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = groups.split('::');
  const headParts = head ? head.split(':') : [];
  const tailParts = tail ? tail.split(':') : [];
  const parts =
    tail === undefined
      ? headParts
      : [
          ...headParts,
          ...Array<string>(8 - headParts.length - tailParts.length).fill('0'),
          ...tailParts,
        ];
  const bytes = new Uint8Array(16);
  parts.forEach((part, i) => {
    const value = parseInt(part, 16);
    bytes[i * 2] = value >> 8;
    bytes[i * 2 + 1] = value & 0xff;
  });
  return bytes;
}

/** `10.0.0.0/8`, `fc00::/7`, or one address (a /32 or /128); null when `text` is neither. */
export function parseCidr(text: string): Cidr | null {
  const [address, bits, extra] = text.split('/');
  if (extra !== undefined) return null;
  const base = parseIp(address);
  if (!base || /[[\]%]/.test(address)) return null;
  const max = base.family === 4 ? 32 : 128;
  if (bits === undefined) return { base, bits: max };
  if (!/^\d{1,3}$/.test(bits) || Number(bits) > max) return null;
  return { base, bits: Number(bits) };
}

export function cidrContains(cidr: Cidr, address: IpAddress): boolean {
  if (cidr.base.family !== address.family) return false;
  const whole = Math.floor(cidr.bits / 8);
  for (let i = 0; i < whole; i++) if (cidr.base.bytes[i] !== address.bytes[i]) return false;
  const rest = cidr.bits % 8;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return (cidr.base.bytes[whole] & mask) === (address.bytes[whole] & mask);
}

/** Conventional text of an address (IPv6 compressed, lower case). */
export function formatIp(address: IpAddress): string {
  if (address.family === 4) return [...address.bytes].join('.');
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((address.bytes[i] << 8) | address.bytes[i + 1]);
  let best = { start: -1, length: 0 };
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > best.length && j - i > 1) best = { start: i, length: j - i };
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best.start < 0) return hex.join(':');
  const head = hex.slice(0, best.start).join(':');
  const tail = hex.slice(best.start + best.length).join(':');
  return `${head}::${tail}`;
}

/** IPv6 forms that carry an IPv4 address the packets end up at. */
const IPV4_CARRIERS: { cidr: string; offset: number; name: string }[] = [
  { cidr: '::ffff:0:0/96', offset: 12, name: 'an IPv4-mapped' },
  { cidr: '::/96', offset: 12, name: 'an IPv4-compatible' },
  { cidr: '64:ff9b::/96', offset: 12, name: 'a NAT64' },
  { cidr: '2002::/16', offset: 2, name: 'a 6to4' },
];
const CARRIERS = IPV4_CARRIERS.map((carrier) => ({
  ...carrier,
  block: parseCidr(carrier.cidr)!,
}));

/**
 * The IPv4 address inside an IPv4-mapped, IPv4-compatible, NAT64 or 6to4 IPv6 address, and the
 * form's name with its article ("an IPv4-mapped"); null for any other address (and for `::` and `::1`, which are IPv6's own).
 */
export function embeddedIpv4(address: IpAddress): { ipv4: IpAddress; form: string } | null {
  if (address.family !== 6) return null;
  for (const carrier of CARRIERS) {
    if (!cidrContains(carrier.block, address)) continue;
    const ipv4: IpAddress = {
      family: 4,
      bytes: address.bytes.slice(carrier.offset, carrier.offset + 4),
    };
    if (carrier.name === 'an IPv4-compatible' && ipv4.bytes[0] === 0) return null;
    return { ipv4, form: carrier.name };
  }
  return null;
}
