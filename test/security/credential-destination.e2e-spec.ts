import { ApiKeysService } from '../../src/modules/teams/api-keys.service';
import { TeamsService } from '../../src/modules/teams/teams.service';
import { apiClient } from '../support/api-client';
import { useTestApp } from '../support/use-test-app';

/**
 * A stored MCP credential is bound to its destination: a member who points an admin's schedule at
 * a server of their own and sends the masked header back gets a 400 asking for the credential, and
 * the schedule keeps its server and credential. Agents (identities) follow the same rule.
 */
describe('masked MCP credentials stay with their destination', () => {
  const { app, api } = useTestApp('credential-destination', ['api']);
  let member: ReturnType<typeof apiClient>;

  beforeAll(async () => {
    const keys = app.ambient.app.get(ApiKeysService);
    const teams = app.ambient.app.get(TeamsService);
    const team = (await teams.findByName('default'))!;
    const user = await teams.createUser(team, { displayName: 'Member', role: 'member' });
    member = apiClient(app.baseUrl, (await keys.create(user, 'member')).key);
  });

  const adminServer = {
    url: 'https://mcp.internal.example/mcp',
    headers: { Authorization: 'Bearer admin-token-5521' },
  };
  const schedule = (server: object) => ({
    name: 'Nightly',
    cron_schedule: '0 3 * * *',
    prompt: 'Audit',
    enabled: false,
    agent_config: { mcp_servers: { tools: server } },
  });

  it("refuses a schedule's masked header sent to another server, and keeps the stored one", async () => {
    const created = await api.post('/agent/schedules', schedule(adminServer));
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const shown = created.body.agent_config.mcp_servers.tools;
    expect(shown.headers).toEqual({ Authorization: '***' });

    // The member's own server, with the admin's header sent back masked.
    for (const url of ['http://127.0.0.1:3306/mcp', 'http://mcp.internal.example/mcp']) {
      const moved = await member.put(`/agent/schedules/${id}`, schedule({ ...shown, url }));
      expect(moved.status).toBe(400);
      expect(moved.body.detail).toMatch(
        /^agent_config\.mcp_servers\.tools\.headers\.Authorization: is a masked value, and the server's destination changed/,
      );
      expect(moved.body.detail).toContain('send the credential again');
    }
    const stored = (await api.get(`/agent/schedules/${id}`)).body;
    expect(stored.agent_config.mcp_servers.tools.url).toBe(adminServer.url);
    expect(stored.updated_at).toBe(created.body.updated_at);

    // The same server (another path on its origin) keeps the credential; a new one may be given.
    const samePlace = await member.put(
      `/agent/schedules/${id}`,
      schedule({ ...shown, url: 'https://mcp.internal.example/v2/mcp' }),
    );
    expect(samePlace.status).toBe(200);
    const resent = await member.put(
      `/agent/schedules/${id}`,
      schedule({ url: 'http://127.0.0.1:3306/mcp', headers: { Authorization: 'Bearer mine' } }),
    );
    expect(resent.status).toBe(200);
    expect(resent.body.agent_config.mcp_servers.tools.url).toBe('http://127.0.0.1:3306/mcp');
  });

  it("holds for an agent's MCP servers too", async () => {
    const created = await api.post('/agent/identities', {
      name: 'Helper',
      mcp_servers: { tools: adminServer },
    });
    expect(created.status).toBe(201);
    const uid = created.body.uid as string;
    const moved = await api.put(`/agent/identities/${uid}`, {
      mcp_servers: { tools: { url: 'http://127.0.0.1:9/mcp', headers: { Authorization: '***' } } },
    });
    expect(moved.status).toBe(400);
    expect(moved.body.detail).toContain(
      'mcp_servers.tools.headers.Authorization: is a masked value',
    );
    const kept = await api.put(`/agent/identities/${uid}`, {
      mcp_servers: { tools: { url: adminServer.url, headers: { Authorization: '***' } } },
    });
    expect(kept.status).toBe(200);
  });
});
