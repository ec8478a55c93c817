import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { INTERNAL_BODY, startHttpMcpServer, type HttpMcpServer } from '../fixtures/http-mcp-server';
import { apiClient } from '../support/api-client';
import { useTestApp } from '../support/use-test-app';
import { waitFor } from '../support/wait';

/**
 * Issue 19, classes 3 and 4: connections the service host makes on a tenant's behalf (MCP `url`
 * servers, factory repositories) never reach loopback or private addresses unless the operator
 * allow-lists them, never repeat what the remote side answered, and cannot tell open ports from
 * closed ones.
 */
const API_KEY = 'tenant-mcp-token';
const LOOPBACK_REFUSAL = 'egress refused: 127.0.0.1 is a loopback address (AMBIENT_EGRESS_ALLOW)';

type Api = ReturnType<typeof apiClient>;

const finished = (api: Api, runId: string) =>
  waitFor(
    async () => (await api.get(`/agent/runs/${runId}`)).body,
    (run) => ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(run.state),
    { what: `run ${runId} to finish`, timeoutMs: 45_000 },
  );

/** A loopback port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('egress policy, default (nothing allow-listed)', () => {
  let internal: HttpMcpServer;
  beforeAll(async () => {
    internal = await startHttpMcpServer(API_KEY);
  });
  afterAll(() => internal?.close());
  const { api } = useTestApp('sec_egress', ['api', 'worker']);

  const expectRefused = (run: { state: string; status_message: Record<string, unknown> }) => {
    expect(run.state).toBe('FAILED');
    expect(run.status_message.error_code).toBe('environment_setup_failed');
    expect(JSON.stringify(run.status_message)).not.toContain(INTERNAL_BODY);
  };

  it('an MCP url server on a loopback listener sees no connection; the run names the refusal', async () => {
    const created = await api.post('/agent/runs', {
      prompt: 'Use the internal tools',
      config: {
        mcp_servers: { internal: { url: internal.url, headers: { 'x-api-key': API_KEY } } },
      },
    });
    expect(created.status).toBe(200);
    const run = await finished(api, created.body.run_id);
    expectRefused(run);
    expect(run.status_message.message).toBe(
      `MCP server "internal" (${internal.url}) failed to start: ${LOOPBACK_REFUSAL}`,
    );
    expect(internal.connections).toBe(0);
  });

  it('refuses the same server named by an agent identity’s mcp_servers', async () => {
    const agent = await api.post('/agent/identities', {
      name: 'Internal MCP user',
      mcp_servers: { internal: { url: internal.url, headers: { 'x-api-key': API_KEY } } },
    });
    expect(agent.status).toBe(201);
    const created = await api.post('/agent/runs', {
      prompt: 'Use the identity tools',
      agent_identity_uid: agent.body.uid,
    });
    expect(created.status).toBe(200);
    const run = await finished(api, created.body.run_id);
    expectRefused(run);
    expect(run.status_message.message).toContain(LOOPBACK_REFUSAL);
    expect(internal.connections).toBe(0);
  });

  it('refuses a host name that resolves to loopback (localhost) and the IPv6 forms', async () => {
    const urls = [
      `http://localhost:${internal.port}/mcp`,
      `http://[::ffff:127.0.0.1]:${internal.port}/mcp`,
      `http://169.254.169.254/latest/meta-data/`,
    ];
    const runs = await Promise.all(
      urls.map(async (url, i) => {
        const created = await api.post('/agent/runs', {
          prompt: 'Use the tools',
          config: { mcp_servers: { [`s${i}`]: { url } } },
        });
        return finished(api, created.body.run_id);
      }),
    );
    runs.forEach((run) => expectRefused(run));
    expect(
      runs.map((run) => run.status_message.message.replace(/^.*failed to start: /, '')),
    ).toEqual([
      'egress refused: localhost resolves to a loopback address (AMBIENT_EGRESS_ALLOW)',
      'egress refused: ::ffff:7f00:1 is an IPv4-mapped form of 127.0.0.1, a loopback address (AMBIENT_EGRESS_ALLOW)',
      'egress refused: 169.254.169.254 is a link-local address (AMBIENT_EGRESS_ALLOW)',
    ]);
    expect(internal.connections).toBe(0);
  });

  it('refuses MCP urls other than http(s) when the run is created (400 naming the field)', async () => {
    const res = await api.post('/agent/runs', {
      prompt: 'x',
      config: { mcp_servers: { local: { url: 'file:///proc/self/environ' } } },
    });
    expect(res.status).toBe(400);
    expect(res.body.detail).toBe('config.mcp_servers.local.url: must be an http or https URL');
  });

  it('refuses factory repository URLs on loopback: no connection, one answer for open and closed ports', async () => {
    const open = internal.port;
    const closed = await closedPort();
    const answers: Record<string, { status: number; detail: string }> = {};
    for (const url of [
      `https://127.0.0.1:${open}/x.git`,
      `https://127.0.0.1:${closed}/x.git`,
      `ssh://git@127.0.0.1:${open}/x`,
      `ssh://git@127.0.0.1:${closed}/x`,
      `git@localhost:x.git`,
    ]) {
      const res = await api.post('/factory', { repository: { url } });
      answers[url] = { status: res.status, detail: res.body.detail };
    }
    expect(Object.values(answers).slice(0, 4)).toEqual(
      Array(4).fill({ status: 400, detail: `repository.url: ${LOOPBACK_REFUSAL}` }),
    );
    expect(answers['git@localhost:x.git']).toEqual({
      status: 400,
      detail:
        'repository.url: egress refused: localhost resolves to a loopback address (AMBIENT_EGRESS_ALLOW)',
    });
    expect(internal.connections).toBe(0);
    expect((await api.get('/factory')).body.factories).toEqual([]);
  });
});

describe('egress policy, AMBIENT_EGRESS_ALLOW=127.0.0.1:<the server’s port>', () => {
  let internal: HttpMcpServer;
  beforeAll(async () => {
    internal = await startHttpMcpServer(API_KEY);
  });
  afterAll(() => internal?.close());
  const { model, api } = useTestApp('sec_egress_allow', ['api', 'worker'], () => ({
    'egress.allow': `127.0.0.1:${internal.port}`,
  }));

  it('lets the allow-listed MCP server through: the run calls its tool', async () => {
    model.script('egress-allowed', [
      { toolCalls: [{ name: 'mcp__internal__ping', arguments: {} }] },
      { text: 'The server said pong.' },
    ]);
    const created = await api.post('/agent/runs', {
      prompt: 'Ping it [script:egress-allowed]',
      config: {
        mcp_servers: { internal: { url: internal.url, headers: { 'x-api-key': API_KEY } } },
      },
    });
    const run = await finished(api, created.body.run_id);
    expect(run.state).toBe('SUCCEEDED');
    expect(run.status_message).toEqual({ message: 'The server said pong.' });
    expect(internal.connections).toBeGreaterThan(0);
    const toolResult = model.requests
      .filter((r) => r.script === 'egress-allowed')
      .flatMap((r) => r.body.messages)
      .find((m) => m.role === 'tool');
    expect(toolResult?.content).toBe('pong');
  });

  it('names only the status when an allowed server answers with an error, never its body', async () => {
    const created = await api.post('/agent/runs', {
      prompt: 'Use it',
      config: {
        mcp_servers: {
          internal: {
            url: `http://127.0.0.1:${internal.port}/admin`,
            headers: { 'x-api-key': API_KEY },
          },
        },
      },
    });
    const run = await finished(api, created.body.run_id);
    expect(run.state).toBe('FAILED');
    expect(run.status_message.message).toBe(
      `MCP server "internal" (http://127.0.0.1:${internal.port}/admin) failed to start: the server answered HTTP 500`,
    );
    expect(JSON.stringify(run)).not.toContain(INTERNAL_BODY);
  });

  it('still refuses another port of the same address', async () => {
    const port = await closedPort();
    const created = await api.post('/agent/runs', {
      prompt: 'Use it',
      config: { mcp_servers: { other: { url: `http://127.0.0.1:${port}/mcp` } } },
    });
    const run = await finished(api, created.body.run_id);
    expect(run.status_message.message).toContain(LOOPBACK_REFUSAL);
  });
});
