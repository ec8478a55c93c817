import { apiClient } from './support/api-client';
import { runCli } from './support/cli-process';
import {
  createTestEnvironment,
  startTestApp,
  TEST_SECRETS_KEY,
  TestApp,
  TestEnvironment,
} from './support/test-app';
import { createFactory, createWebhook, deliver } from './support/webhook-helpers';

const NEW_KEY = 'a5'.repeat(32);

/** `secrets reencrypt` output: team secrets, webhooks, then the MCP values of each table. */
const reencrypted = (secrets: number, webhooks: number, identities: number) =>
  [
    `team_secrets: ${secrets} re-encrypted`,
    `webhooks: ${webhooks} re-encrypted`,
    'runs (mcp_servers): 0 re-encrypted',
    'schedules (mcp_servers): 0 re-encrypted',
    `agent_identities (mcp_servers): ${identities} re-encrypted`,
    '',
  ].join('\n');

describe('rotating AMBIENT_SECRETS_KEY (previous keys, then `secrets reencrypt`)', () => {
  let env: TestEnvironment;
  let app: TestApp | undefined;
  let hookUrl: string;
  let hookSecret: string;

  /** Ambient with roles api + ingress under the given keys (replacing the running one). */
  const restart = async (secretsKey: string, secretsPreviousKeys = '') => {
    await app?.close();
    app = await startTestApp(env, ['api', 'ingress'], { secretsKey, secretsPreviousKeys });
    return apiClient(app.baseUrl, app.apiKey);
  };
  const accepted = async (body: string) =>
    (
      await deliver(`${app!.ingressUrl}${new URL(hookUrl).pathname}`, body, {
        Authorization: `Bearer ${hookSecret}`,
      })
    ).status;
  const keyIds = async () =>
    (
      (await app!.dataSource.query(
        `SELECT HEX(SUBSTRING(ciphertext, 2, 4)) AS id FROM team_secrets
         UNION ALL SELECT HEX(SUBSTRING(secret_ciphertext, 2, 4)) FROM webhooks`,
      )) as { id: string }[]
    ).map((row) => row.id.toLowerCase());
  /** Key id of the agent identity's sealed MCP header (bytes 1–4 of the cipher output). */
  const mcpKeyId = async () => {
    const [row] = (await app!.dataSource.query(
      `SELECT settings FROM agent_identities WHERE name = 'rotating-agent'`,
    )) as { settings: string | Record<string, unknown> }[];
    const settings = typeof row.settings === 'string' ? JSON.parse(row.settings) : row.settings;
    const sealed = settings.mcp_servers.remote.headers.Authorization as { ciphertext: string };
    return Buffer.from(sealed.ciphertext, 'base64').subarray(1, 5).toString('hex');
  };
  const reencrypt = (extra: Record<string, string>) =>
    runCli(['secrets', 'reencrypt'], env.childEnv(extra));

  beforeAll(async () => {
    env = createTestEnvironment('secrets_rotation', 'http://127.0.0.1:9/v1');
    const api = await restart(TEST_SECRETS_KEY);
    const factory = await createFactory(api, 'Rotation');
    const hook = await createWebhook(api, factory, { name: 'rotating' });
    hookUrl = hook.url;
    hookSecret = hook.secret!;
    expect(await accepted('{"n":1}')).toBe(202);
    const agent = await api.post('/agent/identities', {
      name: 'rotating-agent',
      mcp_servers: {
        remote: { url: 'https://mcp.example.test/mcp', headers: { Authorization: 'Bearer t' } },
      },
    });
    expect(agent.status).toBe(201);
  });

  afterAll(async () => {
    await app?.close();
    await env?.destroy();
  });

  it('names the missing key when a server gets only the new one, and accepts nothing', async () => {
    await restart(NEW_KEY);
    expect(await accepted('{"n":2}')).toBe(503);
  });

  it('keeps serving with the old key among the previous ones, and re-encrypts every value', async () => {
    const api = await restart(NEW_KEY, TEST_SECRETS_KEY);
    expect(await accepted('{"n":3}')).toBe(202);
    const ids = await keyIds();
    expect(ids.length).toBe(2);
    const oldId = ids[0];

    const withoutOld = await reencrypt({ AMBIENT_SECRETS_KEY: NEW_KEY });
    expect(withoutOld.code).toBe(1);
    expect(withoutOld.stderr).toContain('a key this server does not have');
    expect(await keyIds()).toEqual([oldId, oldId]);
    expect(await mcpKeyId()).toBe(oldId);

    const done = await reencrypt({
      AMBIENT_SECRETS_KEY: NEW_KEY,
      AMBIENT_SECRETS_PREVIOUS_KEYS: TEST_SECRETS_KEY,
    });
    expect(done.stderr).toBe('');
    expect(done.code).toBe(0);
    expect(done.stdout).toBe(reencrypted(1, 1, 1));
    const newIds = await keyIds();
    expect(newIds[0]).not.toBe(oldId);
    expect(newIds).toEqual([newIds[0], newIds[0]]);
    expect(await mcpKeyId()).toBe(newIds[0]);
    const again = await reencrypt({ AMBIENT_SECRETS_KEY: NEW_KEY });
    expect(again.stdout).toBe(reencrypted(0, 0, 0));
    expect((await api.get('/secrets')).body.secrets).toHaveLength(1);
  });

  it('works with the new key alone once everything is re-encrypted; the webhook secret is unchanged', async () => {
    await restart(NEW_KEY);
    expect(await accepted('{"n":4}')).toBe(202);
    await restart(TEST_SECRETS_KEY);
    expect(await accepted('{"n":5}')).toBe(503);
  });
});
