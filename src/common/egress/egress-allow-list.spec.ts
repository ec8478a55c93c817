import { EgressAllowList } from './egress-allow-list';
import { parseIp } from './ip-address';

const allows = (list: string, host: string, address: string, port = 443) =>
  EgressAllowList.parse(list).allows(host, parseIp(address)!, port);

describe('EgressAllowList', () => {
  it('allows addresses inside a listed block, on any port', () => {
    expect(allows('10.0.0.0/8', '10.2.3.4', '10.2.3.4', 8080)).toBe(true);
    expect(allows('10.0.0.0/8', '11.0.0.1', '11.0.0.1')).toBe(false);
    expect(allows('fd00::/8', 'fd12::1', 'fd12::1')).toBe(true);
  });

  it('allows one address, with or without a port', () => {
    expect(allows('127.0.0.1', 'localhost', '127.0.0.1', 1)).toBe(true);
    expect(allows('127.0.0.1:8080', '127.0.0.1', '127.0.0.1', 8080)).toBe(true);
    expect(allows('127.0.0.1:8080', '127.0.0.1', '127.0.0.1', 8081)).toBe(false);
    expect(allows('[::1]:8080', '::1', '::1', 8080)).toBe(true);
    expect(allows('10.0.0.0/8:443', '10.0.0.5', '10.0.0.5', 443)).toBe(true);
    expect(allows('10.0.0.0/8:443', '10.0.0.5', '10.0.0.5', 80)).toBe(false);
  });

  it('matches an IPv4 entry for the IPv6 forms of that address', () => {
    expect(allows('127.0.0.1', 'x', '::ffff:127.0.0.1')).toBe(true);
    expect(allows('127.0.0.1', 'x', '::ffff:127.0.0.2')).toBe(false);
  });

  it('allows host names exactly, or every name under a wildcard', () => {
    expect(allows('mcp.internal', 'MCP.internal.', '10.0.0.9')).toBe(true);
    expect(allows('mcp.internal:8443', 'mcp.internal', '10.0.0.9', 8443)).toBe(true);
    expect(allows('mcp.internal:8443', 'mcp.internal', '10.0.0.9', 443)).toBe(false);
    expect(allows('mcp.internal', 'evil-mcp.internal', '10.0.0.9')).toBe(false);
    expect(allows('*.corp.example', 'git.corp.example', '10.0.0.9')).toBe(true);
    expect(allows('*.corp.example', 'corp.example', '10.0.0.9')).toBe(false);
    expect(allows('*.corp.example', 'corp.example.evil.test', '10.0.0.9')).toBe(false);
  });

  it('reads several entries, spaces and empty entries ignored', () => {
    const list = EgressAllowList.parse(' 127.0.0.1 , ,10.0.0.0/8 ');
    expect(list.allows('a', parseIp('10.9.9.9')!, 1)).toBe(true);
    expect(list.allows('a', parseIp('127.0.0.1')!, 1)).toBe(true);
    expect(EgressAllowList.parse('').empty).toBe(true);
    expect(EgressAllowList.parse(undefined).empty).toBe(true);
  });

  it.each(['http://10.0.0.1', '10.0.0.0/33', '127.0.0.1:99999', 'a b', 'host:', '[::1]:x', '*'])(
    'refuses the entry %j with a message naming it',
    (entry) => {
      expect(() => EgressAllowList.parse(`127.0.0.1,${entry}`)).toThrow(
        `"${entry}" is not a block`,
      );
    },
  );
});
