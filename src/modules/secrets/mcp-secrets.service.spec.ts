import { ApiError } from '../../common/errors/api-error';
import type { StoredMcpServerConfig } from '../run-config';
import { maskMcpServers } from './mcp-secret-values';
import { McpSecretError, McpSecrets } from './mcp-secrets.service';
import { SecretCipher } from './secret-cipher';
import type { TeamSecretsService } from './team-secrets.service';

const TEAM = 'team_aaaaaaaaaaaaaaaaaa';

function secretsOf(values: Record<string, string>, key: Buffer | null = Buffer.alloc(32, 7)) {
  const cipher = new SecretCipher({ secretsKey: key ?? undefined });
  const service = {
    cipher,
    find: async (_team: string, name: string) => (name in values ? { name } : null),
    reveal: async (_team: string, name: string) => values[name] ?? null,
  } as unknown as TeamSecretsService;
  return { cipher, mcp: new McpSecrets(service) };
}

const servers = (headers: Record<string, unknown>): Record<string, StoredMcpServerConfig> =>
  ({ remote: { url: 'https://mcp.example.test/mcp', headers } }) as Record<
    string,
    StoredMcpServerConfig
  >;

describe('McpSecrets', () => {
  it('seals literals bound to the team, keeps references, and reveals both', async () => {
    const { cipher, mcp } = secretsOf({ TOKEN: 'from-secret' });
    const sealed = await mcp.seal(
      TEAM,
      servers({ A: 'literal', B: { secret: 'TOKEN' } }),
      'config.mcp_servers',
    );
    const headers = sealed.remote.headers!;
    expect(headers.B).toEqual({ secret: 'TOKEN' });
    expect(JSON.stringify(headers)).not.toContain('literal');
    const stored = Buffer.from((headers.A as { ciphertext: string }).ciphertext, 'base64');
    expect(cipher.decrypt(stored, TEAM)).toBe('literal');
    expect(() => cipher.decrypt(stored, 'team_bbbbbbbbbbbbbbbbbb')).toThrow();

    const revealed = await mcp.reveal(TEAM, sealed);
    expect(revealed.remote).toEqual({
      url: 'https://mcp.example.test/mcp',
      headers: { A: 'literal', B: 'from-secret' },
    });
    expect(maskMcpServers(sealed).remote.headers).toEqual({ A: '***', B: '<secret:TOKEN>' });
  });

  it('names the field of a missing reference, and of a masked value with nothing behind it', async () => {
    const { mcp } = secretsOf({});
    await expect(
      mcp.seal(TEAM, servers({ A: { secret: 'NOPE' } }), 'mcp_servers'),
    ).rejects.toMatchObject({
      code: 'invalid_request',
      message: 'mcp_servers.remote.headers.A.secret: the team has no secret named "NOPE"',
    });
    await expect(mcp.seal(TEAM, servers({ A: '***' }), 'mcp_servers')).rejects.toBeInstanceOf(
      ApiError,
    );
  });

  it('keeps the stored value when its mask is sent back, and refuses a foreign ciphertext', async () => {
    const { mcp } = secretsOf({ TOKEN: 'x' });
    const stored = await mcp.seal(TEAM, servers({ A: 'one', B: { secret: 'TOKEN' } }), 'f');
    const again = await mcp.seal(TEAM, maskMcpServers(stored), 'f', stored);
    expect(again).toEqual(stored);

    const other = await secretsOf({}).mcp.seal('team_bbbbbbbbbbbbbbbbbb', servers({ A: 'v' }), 'f');
    await expect(mcp.seal(TEAM, other, 'f')).rejects.toMatchObject({
      message: 'f.remote.headers.A: is not a value this team stores',
    });
  });

  it('keeps a masked literal only for the destination it was stored for', async () => {
    const { mcp } = secretsOf({ TOKEN: 'x' });
    const stored = await mcp.seal(TEAM, servers({ A: 'admin-token', B: { secret: 'TOKEN' } }), 'f');
    const moved = (change: object) => ({
      remote: { ...maskMcpServers(stored).remote, ...change },
    });
    // Same origin, another path: kept.
    const samePlace = await mcp.seal(
      TEAM,
      moved({ url: 'https://mcp.example.test/v2' }),
      'f',
      stored,
    );
    expect(samePlace.remote.headers).toEqual(stored.remote.headers);
    for (const change of [
      { url: 'http://127.0.0.1:8080/mcp' },
      { url: 'https://mcp.example.test:8443/mcp' },
      { url: 'http://mcp.example.test/mcp' },
      { url: undefined, command: 'sh', args: ['-c', 'env'] },
    ]) {
      await expect(mcp.seal(TEAM, moved(change), 'f', stored)).rejects.toMatchObject({
        code: 'invalid_request',
        message: expect.stringMatching(
          /^f\.remote\.headers\.A: is a masked value, and the server's destination changed .*send the credential again/,
        ),
      });
    }
    // A reference names a team secret, not a stored credential: it follows the server.
    const referenceOnly = await mcp.seal(
      TEAM,
      { remote: { url: 'http://127.0.0.1:8080/mcp', headers: { B: '<secret:TOKEN>' } } },
      'f',
      stored,
    );
    expect(referenceOnly.remote.headers).toEqual({ B: { secret: 'TOKEN' } });
    // A new value for the new destination is fine.
    const resent = await mcp.seal(
      TEAM,
      moved({ url: 'http://127.0.0.1:8080/mcp', headers: { A: 'mine' } }),
      'f',
      stored,
    );
    expect(resent.remote.url).toBe('http://127.0.0.1:8080/mcp');
  });

  it("binds a started server's variables to its command and arguments", async () => {
    const { mcp } = secretsOf({});
    const stdio = (command: string, args: string[], value: string) =>
      ({ local: { command, args, env: { KEY: value } } }) as Record<string, StoredMcpServerConfig>;
    const stored = await mcp.seal(TEAM, stdio('npx', ['-y', 'server'], 'k'), 'f');
    expect(await mcp.seal(TEAM, stdio('npx', ['-y', 'server'], '***'), 'f', stored)).toEqual(
      stored,
    );
    await expect(
      mcp.seal(TEAM, stdio('npx', ['-y', 'evil'], '***'), 'f', stored),
    ).rejects.toMatchObject({
      message: expect.stringContaining('f.local.env.KEY: is a masked value'),
    });
  });

  it('fails revealing a reference whose secret is gone, naming the field', async () => {
    const { mcp } = secretsOf({});
    await expect(mcp.reveal(TEAM, servers({ A: { secret: 'GONE' } }))).rejects.toEqual(
      new McpSecretError(
        'mcp_servers.remote.headers.A: the team has no secret named "GONE" (was it deleted?)',
      ),
    );
  });

  it('refuses literals without AMBIENT_SECRETS_KEY rather than storing them in clear', async () => {
    const { mcp } = secretsOf({}, null);
    await expect(mcp.seal(TEAM, servers({ A: 'v' }), 'mcp_servers')).rejects.toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining('AMBIENT_SECRETS_KEY'),
    });
  });
});
