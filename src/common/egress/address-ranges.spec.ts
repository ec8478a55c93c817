import { refusedRange } from './address-ranges';
import { formatIp, parseCidr, parseIp } from './ip-address';

const why = (address: string) => refusedRange(parseIp(address)!);

describe('refusedRange', () => {
  it.each([
    ['127.0.0.1', 'a loopback address'],
    ['127.255.0.9', 'a loopback address'],
    ['0.0.0.0', 'an unspecified address'],
    ['10.1.2.3', 'a private address'],
    ['172.16.0.1', 'a private address'],
    ['172.31.255.255', 'a private address'],
    ['192.168.1.1', 'a private address'],
    ['100.64.0.1', 'a shared (CGNAT) address'],
    ['100.127.255.254', 'a shared (CGNAT) address'],
    ['169.254.169.254', 'a link-local address'],
    ['224.0.0.1', 'a multicast address'],
    ['239.255.255.250', 'a multicast address'],
    ['255.255.255.255', 'a reserved address'],
    ['198.18.0.1', 'a reserved address'],
  ])('refuses IPv4 %s as %s', (address, kind) => {
    expect(why(address)).toBe(kind);
  });

  it.each(['8.8.8.8', '1.1.1.1', '172.15.255.255', '172.32.0.0', '100.63.255.255', '100.128.0.0'])(
    'lets the public IPv4 address %s through',
    (address) => {
      expect(why(address)).toBeNull();
    },
  );

  it.each([
    ['::1', 'a loopback address'],
    ['::', 'an unspecified address'],
    ['fe80::1', 'a link-local address'],
    ['fe80::1%eth0', 'a link-local address'],
    ['febf:ffff::1', 'a link-local address'],
    ['fc00::1', 'a unique-local address'],
    ['fd00:ec2::254', 'a unique-local address'],
    ['ff02::1', 'a multicast address'],
    ['fec0::1', 'a site-local address'],
    ['64:ff9b:1::a00:1', 'a local-use NAT64 address'],
  ])('refuses IPv6 %s as %s', (address, kind) => {
    expect(why(address)).toBe(kind);
  });

  it.each(['2606:4700:4700::1111', '2001:4860:4860::8888', '2a00:1450:4001:80b::200e'])(
    'lets the public IPv6 address %s through',
    (address) => {
      expect(why(address)).toBeNull();
    },
  );

  it.each([
    ['::ffff:127.0.0.1', 'an IPv4-mapped form of 127.0.0.1, a loopback address'],
    ['::ffff:7f00:1', 'an IPv4-mapped form of 127.0.0.1, a loopback address'],
    ['::ffff:169.254.169.254', 'an IPv4-mapped form of 169.254.169.254, a link-local address'],
    ['::ffff:a00:1', 'an IPv4-mapped form of 10.0.0.1, a private address'],
    ['::127.0.0.1', 'an IPv4-compatible form of 127.0.0.1, a loopback address'],
    ['64:ff9b::192.168.0.1', 'a NAT64 form of 192.168.0.1, a private address'],
    ['2002:7f00:1::', 'a 6to4 form of 127.0.0.1, a loopback address'],
    ['2002:a9fe:a9fe::1', 'a 6to4 form of 169.254.169.254, a link-local address'],
  ])('refuses %s, an IPv6 form of a refused IPv4 address', (address, kind) => {
    expect(why(address)).toBe(kind);
  });

  it.each(['::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1'])(
    'lets %s, an IPv6 form of a public IPv4 address, through',
    (address) => {
      expect(why(address)).toBeNull();
    },
  );
});

describe('ip-address parsing', () => {
  it('reads and writes IPv6 in its compressed form', () => {
    expect(formatIp(parseIp('0:0:0:0:0:0:0:1')!)).toBe('::1');
    expect(formatIp(parseIp('[2001:db8:0:0:1:0:0:1]')!)).toBe('2001:db8::1:0:0:1');
    expect(formatIp(parseIp('::ffff:127.0.0.1')!)).toBe('::ffff:7f00:1');
    expect(parseIp('localhost')).toBeNull();
    expect(parseIp('127.1')).toBeNull();
  });

  it('reads blocks and single addresses, and nothing else', () => {
    expect(parseCidr('10.0.0.0/8')?.bits).toBe(8);
    expect(parseCidr('::1')?.bits).toBe(128);
    expect(parseCidr('10.0.0.0/33')).toBeNull();
    expect(parseCidr('10.0.0.0/8/1')).toBeNull();
    expect(parseCidr('example.com/8')).toBeNull();
  });
});
