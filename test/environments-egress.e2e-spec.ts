import { ApiKeysService } from '../src/modules/teams/api-keys.service';
import { TeamsService } from '../src/modules/teams/teams.service';
import { apiClient } from './support/api-client';
import { createWorkerCredential, RawWorkerClient } from './support/raw-worker-client';
import { useTestApp } from './support/use-test-app';
import { waitFor } from './support/wait';

interface EnvironmentBody {
  uid: string;
  config: Record<string, unknown> & { network?: string; egress_allow?: unknown[] };
}

const FORBIDDEN = 'an admin of the team forbade open egress';

describe('environments: network allowlist, host-bound secrets and the team network policy', () => {
  const { app, api, model } = useTestApp('environments-egress', ['api', 'worker']);
  let member: ReturnType<typeof apiClient>;
  let guest: ReturnType<typeof apiClient>;

  beforeAll(async () => {
    const created = await api.post('/api-keys', { name: 'member key', role: 'member' });
    expect(created.status).toBe(201);
    member = apiClient(app.baseUrl, created.body.key as string);
    const teams = app.ambient.app.get(TeamsService);
    const other = await teams.createTeam('egress-guests');
    const guestAdmin = await teams.createUser(other, { displayName: 'Guest', role: 'admin' });
    guest = apiClient(
      app.baseUrl,
      (await app.ambient.app.get(ApiKeysService).create(guestAdmin, 'g')).key,
    );
    expect(
      (await api.post('/secrets', { name: 'GITHUB_TOKEN', value: 'ghp-0123456789' })).status,
    ).toBe(201);
  });

  afterEach(async () => {
    expect((await api.put('/network-policy', { egress_open_allowed: true })).status).toBe(200);
  });

  const createEnvironment = async (body: Record<string, unknown>): Promise<EnvironmentBody> => {
    const res = await api.post('/agent/environments', body);
    expect(res.status).toBe(201);
    return res.body as EnvironmentBody;
  };
  const environment = async (uid: string): Promise<EnvironmentBody> =>
    (await api.get(`/agent/environments/${uid}`)).body as EnvironmentBody;
  const auditEvents = async (action: string) =>
    (await app.dataSource.query(
      `SELECT target_id, details FROM audit_events WHERE action = ? AND outcome = 'success' ORDER BY occurred_at, id`,
      [action],
    )) as { target_id: string; details: string | Record<string, unknown> }[];
  const details = (row: { details: string | Record<string, unknown> }) =>
    typeof row.details === 'string'
      ? (JSON.parse(row.details) as Record<string, unknown>)
      : row.details;

  describe('egress_allow', () => {
    it('stores the rules as written with network "allowlist" and returns them', async () => {
      const rules = [
        'api.github.com',
        'registry.npmjs.org:443',
        '*.pythonhosted.org',
        { host: 'api.example.com', methods: ['GET', 'HEAD'] },
      ];
      const created = await createEnvironment({
        name: 'allowlisted',
        network: 'allowlist',
        egress_allow: rules,
      });
      expect(created.config).toMatchObject({ network: 'allowlist', egress_allow: rules });
      expect((await environment(created.uid)).config).toMatchObject({
        network: 'allowlist',
        egress_allow: rules,
      });
      // null clears the list.
      const cleared = await api.patch(`/agent/environments/${created.uid}`, { egress_allow: null });
      expect(cleared.status).toBe(200);
      expect((await environment(created.uid)).config.egress_allow).toBeUndefined();
    });

    it('refuses an invalid rule with a 400 naming it, and changes nothing', async () => {
      const count = async () =>
        (
          (await app.dataSource.query('SELECT COUNT(*) AS n FROM environments')) as { n: string }[]
        )[0].n;
      const before = await count();
      const invalid: [unknown, RegExp][] = [
        [['a.example.com', 'b.example.com', { host: 'not a host' }], /^egress_allow\.2\.host: /],
        [['a.example.com', 'example.com:99999'], /^egress_allow\.1: .*port/],
        [[{ host: 'a.example.com', methods: ['GET', 'FETCH'] }], /^egress_allow\.0\.methods\.1: /],
        [['*.com'], /^egress_allow\.0: .*too broad/],
        ['api.github.com', /^egress_allow: /],
      ];
      for (const [rules, detail] of invalid) {
        const res = await api.post('/agent/environments', {
          name: 'refused',
          network: 'allowlist',
          egress_allow: rules,
        });
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({ status: 400, title: 'Invalid request' });
        expect(res.body.detail).toMatch(detail);
      }
      expect(await count()).toBe(before);

      const kept = await createEnvironment({
        name: 'kept',
        network: 'allowlist',
        egress_allow: ['api.github.com'],
      });
      const refused = await api.patch(`/agent/environments/${kept.uid}`, {
        description: 'must not be saved',
        egress_allow: ['api.github.com', 'bad_host!'],
      });
      expect(refused.status).toBe(400);
      expect(refused.body.detail).toMatch(/^egress_allow\.1: "bad_host!" is not a host name/);
      const after = await environment(kept.uid);
      expect(after.config.egress_allow).toEqual(['api.github.com']);
      expect(after.config.description).toBeNull();
      expect(
        (await api.post('/agent/environments', { name: 'x', network: 'everything' })).body.detail,
      ).toMatch(/^network: /);
    });
  });

  describe('secrets bound to hosts', () => {
    const bound = { name: 'GITHUB_TOKEN', inject_hosts: ['api.github.com', 'github.com'] };
    const badHosts = {
      name: 'GITHUB_TOKEN',
      inject_hosts: ['api.github.com', 'http://github.com'],
    };

    it('an environment stores inject_hosts and refuses an invalid host naming it', async () => {
      const created = await createEnvironment({ name: 'bound-secrets', secrets: [bound] });
      expect((await environment(created.uid)).config.secrets).toEqual([bound]);
      const refused = await api.patch(`/agent/environments/${created.uid}`, {
        secrets: [badHosts],
      });
      expect(refused.status).toBe(400);
      expect(refused.body.detail).toMatch(/^secrets\.0\.inject_hosts\.1: /);
      expect((await environment(created.uid)).config.secrets).toEqual([bound]);
    });

    it('an agent identity stores inject_hosts and refuses an invalid host naming it', async () => {
      const refused = await api.post('/agent/identities', {
        name: 'bound-agent',
        secrets: [badHosts],
      });
      expect(refused.status).toBe(400);
      expect(refused.body.detail).toMatch(/^secrets\.0\.inject_hosts\.1: /);
      const [{ n }] = (await app.dataSource.query(
        `SELECT COUNT(*) AS n FROM agent_identities WHERE name = 'bound-agent'`,
      )) as { n: string }[];
      expect(Number(n)).toBe(0);
      const created = await api.post('/agent/identities', {
        name: 'bound-agent',
        secrets: [bound],
      });
      expect(created.status).toBe(201);
      const read = await api.get(`/agent/identities/${created.body.uid}`);
      expect(read.body.secrets).toEqual([bound]);
      const appended = await api.put(`/agent/identities/${created.body.uid}`, {
        secrets_append: [{ name: 'OTHER', inject_hosts: ['*.example.com'] }],
      });
      expect(appended.status).toBe(200);
      expect(appended.body.secrets).toEqual([
        bound,
        { name: 'OTHER', inject_hosts: ['*.example.com'] },
      ]);
    });

    it("a run's config.secrets stores inject_hosts and refuses an invalid host naming it", async () => {
      const runs = async () =>
        ((await app.dataSource.query('SELECT COUNT(*) AS n FROM runs')) as { n: string }[])[0].n;
      const before = await runs();
      const refused = await api.post('/agent/runs', {
        prompt: 'bound secret',
        config: { secrets: [badHosts] },
      });
      expect(refused.status).toBe(400);
      expect(refused.body.detail).toMatch(/^config\.secrets\.0\.inject_hosts\.1: /);
      expect(await runs()).toBe(before);
      model.script('bound', [{ text: 'done' }]);
      const created = await api.post('/agent/runs', {
        prompt: 'bound secret [script:bound]',
        config: { secrets: [bound] },
      });
      expect(created.status).toBe(200);
      const run = (await api.get(`/agent/runs/${created.body.run_id}`)).body;
      expect(run.agent_config.secrets).toEqual([bound]);
    });
  });

  describe('the team network policy', () => {
    it('only an admin changes it; the change is audited', async () => {
      expect((await api.get('/network-policy')).body).toEqual({ egress_open_allowed: true });
      const refused = await member.put('/network-policy', { egress_open_allowed: false });
      expect(refused.status).toBe(403);
      expect((await member.get('/network-policy')).body).toEqual({ egress_open_allowed: true });
      const bad = await api.put('/network-policy', { egress_open_allowed: 'no' });
      expect(bad.status).toBe(400);
      expect(bad.body.detail).toMatch(/^egress_open_allowed: /);
      const changed = await api.put('/network-policy', { egress_open_allowed: false });
      expect(changed.status).toBe(200);
      expect(changed.body).toEqual({ egress_open_allowed: false });
      expect((await member.get('/network-policy')).body).toEqual({ egress_open_allowed: false });
      const events = await auditEvents('network_policy.update');
      expect(details(events[events.length - 1])).toEqual({
        before: { egress_open_allowed: true },
        after: { egress_open_allowed: false },
      });
    });

    it('forbidden open egress: saving network "egress" is a 400 naming network', async () => {
      const open = await createEnvironment({ name: 'open-before-the-ban', network: 'egress' });
      expect((await api.put('/network-policy', { egress_open_allowed: false })).status).toBe(200);
      const created = await api.post('/agent/environments', { name: 'open', network: 'egress' });
      expect(created.status).toBe(400);
      expect(created.body.detail).toMatch(new RegExp(`^network: ${FORBIDDEN}.*allowlist`));
      const edited = await api.patch(`/agent/environments/${open.uid}`, { description: 'edit' });
      expect(edited.status).toBe(400);
      expect(edited.body.detail).toMatch(/^network: /);
      expect((await environment(open.uid)).config.description).toBeNull();
      // The other modes stay available.
      const moved = await api.patch(`/agent/environments/${open.uid}`, {
        network: 'allowlist',
        egress_allow: ['api.github.com'],
      });
      expect(moved.status).toBe(200);
      expect(moved.body.config).toMatchObject({ network: 'allowlist' });
      await createEnvironment({ name: 'closed', network: 'none' });
    });

    it('a run in an environment saved with egress before the ban fails before its sandbox', async () => {
      const open = await createEnvironment({ name: 'open-run', network: 'egress' });
      expect((await api.put('/network-policy', { egress_open_allowed: false })).status).toBe(200);
      model.script('banned', [{ text: 'must not be asked' }]);
      const created = await api.post('/agent/runs', {
        prompt: 'reach out [script:banned]',
        config: { environment_id: open.uid },
      });
      expect(created.status).toBe(200);
      const ended = await waitFor(
        async () => (await api.get(`/agent/runs/${created.body.run_id}`)).body,
        (run) => ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(run.state),
        { what: 'the run to end' },
      );
      expect(ended.state).toBe('FAILED');
      expect(ended.status_message).toMatchObject({ error_code: 'not_authorized' });
      expect(ended.status_message.message).toContain(FORBIDDEN);
      expect(model.requests.filter((r) => r.script === 'banned')).toHaveLength(0);
    });
  });

  it('a self-hosted execution in such an environment is told to stop when it starts', async () => {
    const open = await createEnvironment({ name: 'open-self-hosted', network: 'egress' });
    expect((await api.put('/network-policy', { egress_open_allowed: false })).status).toBe(200);
    const { credential } = await createWorkerCredential(api, 'egress-box');
    const worker = await RawWorkerClient.connect(app.baseUrl, credential, 'egress-box');
    try {
      const created = await api.post('/agent/runs', {
        prompt: 'reach out from my box',
        config: { worker_host: 'egress-box', environment_id: open.uid },
      });
      const runId = created.body.run_id as string;
      const assignment = await worker.next('task_assignment');
      const key = (assignment.data.env_vars as Record<string, string>).WARP_API_KEY;
      worker.send('task_claimed', { task_id: runId, worker_id: 'egress-box' });
      await waitFor(
        async () => (await api.get(`/agent/runs/${runId}`)).body.state,
        (state) => state === 'CLAIMED',
        { what: 'the run to be claimed' },
      );
      const started = await apiClient(app.baseUrl, key).post('/harness-support/start', {});
      expect(started.status).toBe(403);
      expect(started.body.detail).toContain(FORBIDDEN);
      expect(started.body).not.toHaveProperty('run_secrets');
      const ended = (await api.get(`/agent/runs/${runId}`)).body;
      expect(ended.state).toBe('FAILED');
      expect(ended.status_message).toMatchObject({ error_code: 'not_authorized' });
      expect(ended.status_message.message).toContain(FORBIDDEN);
    } finally {
      worker.close();
    }
  });

  describe('POST /agent/environments/{uid}/egress-allow', () => {
    it('an admin adds a rule once (audited); a member, a guest and an invalid rule are refused', async () => {
      const env = await createEnvironment({
        name: 'allow-button',
        network: 'allowlist',
        egress_allow: ['api.github.com'],
      });
      const path = `/agent/environments/${env.uid}/egress-allow`;
      const byMember = await member.post(path, { rule: 'api.example.com' });
      expect(byMember.status).toBe(403);
      expect(byMember.body.detail).toContain('network.write');
      const byGuest = await guest.post(path, { rule: 'api.example.com' });
      expect(byGuest.status).toBe(404);
      const invalid = await api.post(path, { rule: 'api.example.com:0' });
      expect(invalid.status).toBe(400);
      expect(invalid.body.detail).toMatch(/^rule: /);
      expect((await api.post(path, {})).body.detail).toMatch(/^rule: /);
      expect((await environment(env.uid)).config.egress_allow).toEqual(['api.github.com']);

      const added = await api.post(path, { rule: 'api.example.com' });
      expect(added.status).toBe(200);
      expect(added.body.added).toBe(true);
      expect(added.body.environment.config.egress_allow).toEqual([
        'api.github.com',
        'api.example.com',
      ]);
      expect((await environment(env.uid)).config.egress_allow).toEqual([
        'api.github.com',
        'api.example.com',
      ]);
      // Listed already (in another spelling): nothing changes, nothing is recorded.
      const again = await api.post(path, { rule: 'API.example.com.' });
      expect(again.status).toBe(200);
      expect(again.body.added).toBe(false);
      expect((await environment(env.uid)).config.egress_allow).toHaveLength(2);
      const events = (await auditEvents('environment.egress_allow')).filter(
        (e) => e.target_id === env.uid,
      );
      expect(events).toHaveLength(1);
      expect(details(events[0])).toMatchObject({ rule: 'api.example.com' });
    });
  });
});
