import request from 'supertest';
import { PERMISSIONS, rolesWith, TEAM_ROLES, TeamRole } from '../src/common/auth/roles';
import { ApiKeysService } from '../src/modules/teams/api-keys.service';
import { apiClient } from './support/api-client';
import { useTestApp } from './support/use-test-app';

interface Operation {
  operationId: string;
  security?: unknown[];
  'x-ambient-roles'?: TeamRole[];
  'x-ambient-permission'?: string;
  'x-ambient-key'?: string;
  'x-ambient-public'?: boolean;
}

interface Cell {
  method: string;
  path: string;
  op: Operation;
}

type Caller = TeamRole | 'agent' | 'run-scoped';
const CALLERS: Caller[] = [...TEAM_ROLES, 'agent', 'run-scoped'];
const PLACEHOLDER = 'Zz0000000000000000000z';

/** The main tables: a refused request must change none of their row counts. */
const COUNT_SQL = `SELECT ${['runs', 'environments', 'schedules', 'team_secrets', 'webhooks', 'factories', 'agent_identities', 'api_keys', 'run_limits'].map((t) => `(SELECT COUNT(*) FROM \`${t}\`) AS \`${t}\``).join(', ')}`;

/**
 * Every operation of the served OpenAPI document × every kind of caller: a new route cannot be
 * forgotten (the walk reads the document), and what the document says (`x-ambient-roles`) is
 * what the server does.
 */
describe('roles: every operation × every role', () => {
  const { app, api } = useTestApp('roles', ['api'], {}, { model: false });
  const keys = {} as Record<Caller, string>;
  let operations: Cell[];

  beforeAll(async () => {
    for (const role of TEAM_ROLES) {
      const created = await api.post('/api-keys', { name: `${role} key`, role });
      expect(created.status).toBe(201);
      keys[role] = created.body.key as string;
    }
    const agent = await api.post('/agent/identities', { name: 'matrix-agent' });
    expect(agent.status).toBe(201);
    const agentKey = await api.post(`/agent/identities/${agent.body.uid}/api-keys`, {});
    expect(agentKey.status).toBe(201);
    keys.agent = agentKey.body.key as string;
    // A run-scoped key whose execution holds its run (as a self-hosted worker's would).
    const run = await api.post('/agent/runs', { prompt: 'held by the matrix key' });
    expect(run.status).toBe(200);
    const keyId = 'RunKeyMatrix0000000000';
    await app.dataSource.query(
      `UPDATE runs SET state = 'INPROGRESS', lease_owner = ?, execution_count = 1,
              lease_expires_at = ? WHERE id = ?`,
      [`key:${keyId}`, new Date(Date.now() + 3_600_000), run.body.run_id],
    );
    const [owner] = (await app.dataSource.query(
      `SELECT creator_id, team_id FROM runs WHERE id = ?`,
      [run.body.run_id],
    )) as { creator_id: string; team_id: string }[];
    keys['run-scoped'] = await app.ambient.app.get(ApiKeysService).createForRun({
      id: keyId,
      teamId: owner.team_id,
      userId: owner.creator_id,
      runId: run.body.run_id as string,
      executionId: 1,
    });
    const document = await request(new URL(app.baseUrl).origin).get('/api/v1/openapi.json');
    operations = [];
    for (const [path, item] of Object.entries(
      document.body.paths as Record<string, Record<string, Operation>>,
    )) {
      for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
        const op = item[method];
        if (op && !op['x-ambient-public']) operations.push({ method, path, op });
      }
    }
  });

  /** What only people may do, whatever an agent's role: manage agents, decide approval requests. */
  const peopleOnly = ({ path, op }: Cell): boolean =>
    path.startsWith('/agent/identities') || op['x-ambient-permission'] === 'approvals.decide';

  /** What the caller may do by the document; agents act as members but never do what only people may. */
  const allowedBy = (caller: Caller, cell: Cell): boolean => {
    const { op } = cell;
    if (op['x-ambient-key'] === 'run-scoped') return caller === 'run-scoped';
    if (caller === 'run-scoped') return false;
    if (caller === 'agent') return !peopleOnly(cell) && op['x-ambient-roles']!.includes('member');
    return op['x-ambient-roles']!.includes(caller);
  };

  const send = (caller: Caller, { method, path }: Cell) => {
    const client = apiClient(app.baseUrl, keys[caller]);
    const url = path.replace(/\{[^}]+\}/g, PLACEHOLDER);
    if (method === 'get') return client.get(url).redirects(0);
    if (method === 'delete') return client.delete(url);
    return client[method as 'post' | 'put' | 'patch'](url, {});
  };

  it('declares a permission and its roles on every operation that is not public', () => {
    expect(operations.length).toBeGreaterThan(80);
    const undeclared = operations
      .filter(({ op }) => !op['x-ambient-permission'] || !Array.isArray(op['x-ambient-roles']))
      .map(({ method, path }) => `${method} ${path}`);
    expect(undeclared).toEqual([]);
    for (const { op } of operations) {
      expect(PERMISSIONS).toContain(op['x-ambient-permission']);
      expect(op['x-ambient-roles']).toEqual(
        rolesWith(op['x-ambient-permission'] as (typeof PERMISSIONS)[number]),
      );
    }
  });

  it('publishes the roles of the issue: viewer reads, member runs, admin manages', () => {
    const roles = (operationId: string) =>
      operations.find(({ op }) => op.operationId === operationId)?.op['x-ambient-roles'];
    const everyone = ['admin', 'member', 'viewer'];
    const workers = ['admin', 'member'];
    expect(roles('listRuns')).toEqual(everyone);
    expect(roles('getRunConversation')).toEqual(everyone);
    expect(roles('listWebhooks')).toEqual(everyone);
    expect(roles('listFactories')).toEqual(everyone);
    expect(roles('getUsage')).toEqual(everyone);
    expect(roles('createRun')).toEqual(workers);
    expect(roles('submitFollowup')).toEqual(workers);
    expect(roles('cancelRun')).toEqual(workers);
    expect(roles('decideRunApproval')).toEqual(workers);
    expect(roles('listRunApprovals')).toEqual(everyone);
    expect(roles('listApprovalInbox')).toEqual(everyone);
    expect(roles('createScheduledAgent')).toEqual(workers);
    expect(roles('updateEnvironment')).toEqual(workers);
    // Sharing needs the consent of an admin of the receiving team.
    for (const operationId of [
      'listPendingEnvironments',
      'acceptEnvironment',
      'declineEnvironment',
      'acceptEnvironmentShareLink',
    ]) {
      expect(roles(operationId)).toEqual(['admin']);
    }
    expect(roles('createWebhook')).toEqual(['admin']);
    expect(roles('rotateWebhookSecret')).toEqual(['admin']);
    expect(roles('putFactoryDefinition')).toEqual(['admin']);
    expect(roles('updateSecret')).toEqual(['admin']);
    expect(roles('createApiKey')).toEqual(['admin']);
    expect(roles('listApiKeys')).toEqual(['admin']);
    expect(roles('revokeApiKey')).toEqual(['admin']);
    expect(roles('reportScores')).toEqual([]);
    expect(roles('getLimits')).toEqual(everyone);
    expect(roles('updateLimits')).toEqual(['admin']);
    expect(roles('getAgentLimits')).toEqual(everyone);
    expect(roles('updateAgentLimits')).toEqual(['admin']);
  });

  it('refuses what a caller may not do with 403 not_authorized naming role and permission, changing nothing', async () => {
    const before = await app.dataSource.query(COUNT_SQL);
    const wrong: string[] = [];
    let refusals = 0;
    for (const cell of operations) {
      for (const caller of CALLERS) {
        if (allowedBy(caller, cell)) continue;
        const res = await send(caller, cell);
        refusals++;
        const permission = cell.op['x-ambient-permission'];
        const named =
          caller === 'run-scoped' || cell.op['x-ambient-key'] === 'run-scoped'
            ? /run-scoped key/.test(res.body.detail)
            : caller === 'agent' && peopleOnly(cell)
              ? /^an agent identity's key lacks permission "(agents\.(read|write)": only human users can manage agents|approvals\.decide": only human users can decide approval requests)$/.test(
                  res.body.detail,
                )
              : res.body.detail ===
                `role "${caller === 'agent' ? 'member' : caller}" lacks permission "${permission}" (held by: ${cell.op['x-ambient-roles']!.join(', ')})`;
        if (res.status !== 403 || !String(res.body.type).endsWith('/not-authorized') || !named) {
          wrong.push(`${caller} ${cell.method} ${cell.path}: ${res.status} ${res.body.detail}`);
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(refusals).toBeGreaterThan(150);
    expect(await app.dataSource.query(COUNT_SQL)).toEqual(before);
  });

  it('lets every caller through to what it may do (the route itself answers)', async () => {
    const wrong: string[] = [];
    for (const cell of operations) {
      for (const caller of CALLERS) {
        if (!allowedBy(caller, cell)) continue;
        const res = await send(caller, cell);
        const refused =
          res.status === 401 ||
          (res.status === 403 &&
            /lacks permission|run-scoped key|only human/.test(res.body.detail));
        if (refused) {
          wrong.push(`${caller} ${cell.method} ${cell.path}: ${res.status} ${res.body.detail}`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it('counts refusals by permission and role', async () => {
    const viewer = apiClient(app.baseUrl, keys.viewer);
    const metric = async () =>
      (await app.ambient.metrics.registry.getSingleMetric('ambient_access_denied_total')!.get())
        .values;
    const count = async () =>
      (await metric()).find(
        (v) => v.labels.permission === 'runs.create' && v.labels.role === 'viewer',
      )?.value ?? 0;
    const before = await count();
    expect((await viewer.post('/agent/runs', { prompt: 'no' })).status).toBe(403);
    expect(await count()).toBe(before + 1);
  });
});
