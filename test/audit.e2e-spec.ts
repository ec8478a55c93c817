import { AuditRetentionSweeper } from '../src/modules/audit/audit-retention.sweeper';
import { ApiKeysService } from '../src/modules/teams/api-keys.service';
import { TeamsService } from '../src/modules/teams/teams.service';
import { apiClient } from './support/api-client';
import { runCli } from './support/cli-process';
import { useTestApp } from './support/use-test-app';

interface AuditEventBody {
  id: string;
  occurred_at: string;
  actor: {
    type: string;
    id: string;
    name: string | null;
    role: string | null;
    on_behalf_of: { type: string; id: string; name: string | null } | null;
  };
  action: string;
  target: { type: string; id: string } | null;
  outcome: string;
  request_id: string | null;
  ip: string | null;
  details: Record<string, unknown>;
}

/** The audit log: one event per change made through the API, denied attempts, pages, export. */
describe('audit log (GET /audit-events, audit export)', () => {
  const { app, api, env } = useTestApp(
    'audit',
    ['api'],
    { 'audit.retentionDays': 30 },
    {
      model: false,
    },
  );
  let member: ReturnType<typeof apiClient>;
  let memberKeyId: string;
  let memberUserId: string;
  let otherTeamId: string;
  let guest: ReturnType<typeof apiClient>;

  beforeAll(async () => {
    const teams = app.ambient.app.get(TeamsService, { strict: false });
    const keys = app.ambient.app.get(ApiKeysService, { strict: false });
    const team = (await teams.findByName('default'))!;
    const user = await teams.createUser(team, { displayName: 'Member', role: 'member' });
    const made = await keys.create(user, 'member');
    member = apiClient(app.baseUrl, made.key);
    memberKeyId = made.id;
    memberUserId = user.id;
    const other = await teams.createTeam('audit-guests');
    otherTeamId = other.id;
    const guestAdmin = await teams.createUser(other, { displayName: 'Guest', role: 'admin' });
    guest = apiClient(app.baseUrl, (await keys.create(guestAdmin, 'guest')).key);
  });

  /** Every event the filters select, following the cursor to the end (at most 50 pages). */
  const allEvents = async (query = ''): Promise<AuditEventBody[]> => {
    const events: AuditEventBody[] = [];
    let cursor = '';
    for (let page = 0; page < 50; page += 1) {
      const sep = query ? '&' : '';
      const res = await api.get(
        `/audit-events?limit=200${sep}${query}${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(res.status).toBe(200);
      events.push(...(res.body.events as AuditEventBody[]));
      if (!res.body.page_info.has_next_page) return events;
      cursor = res.body.page_info.next_cursor as string;
    }
    throw new Error('more than 50 pages');
  };
  const ok = (status: number) => expect(status).toBeLessThan(300);

  it('records every kind of change with its actor, target and request, and never a secret', async () => {
    const since = new Date().toISOString();
    const secretValue = 'audit-secret-value-0123456789';
    ok((await api.post('/secrets', { name: 'AUDITED', value: secretValue })).status);
    ok((await api.put('/secrets/AUDITED', { value: `${secretValue}-2` })).status);

    const created = await api
      .post('/agent/runs', { prompt: 'audited run' })
      .set('X-Request-Id', 'audit-request-1');
    ok(created.status);
    const runId = created.body.run_id as string;
    ok((await api.post(`/agent/runs/${runId}/followups`, { message: 'and this' })).status);
    ok((await api.post(`/agent/runs/${runId}/cancel`)).status);

    const schedule = await api.post('/agent/schedules', {
      name: 'nightly',
      cron_schedule: '0 3 * * *',
      prompt: 'tidy up',
    });
    ok(schedule.status);
    const scheduleId = schedule.body.id as string;
    ok((await api.post(`/agent/schedules/${scheduleId}/pause`)).status);
    ok((await api.post(`/agent/schedules/${scheduleId}/resume`)).status);
    ok(
      (
        await api.put(`/agent/schedules/${scheduleId}`, {
          name: 'nightly',
          cron_schedule: '0 4 * * *',
          enabled: true,
          prompt: 'tidy up',
        })
      ).status,
    );
    ok((await api.delete(`/agent/schedules/${scheduleId}`)).status);

    const environment = await api.post('/agent/environments', { name: 'audited-env' });
    ok(environment.status);
    const envId = environment.body.uid as string;
    ok((await api.patch(`/agent/environments/${envId}`, { setup_commands: ['true'] })).status);
    const link = await api.post(`/agent/environments/${envId}/share-link`);
    ok(link.status);
    ok((await api.post(`/agent/environments/${envId}/grants`, { team_id: otherTeamId })).status);
    ok((await api.delete(`/agent/environments/${envId}/grants/${otherTeamId}`)).status);
    ok((await guest.post(`/agent/environments/shared/${link.body.share_token}/accept`)).status);
    // A guest team may use the environment, not change it: refused, and in the guest's log.
    expect((await guest.delete(`/agent/environments/${envId}`)).status).toBe(403);
    const guestLog = await guest.get('/audit-events?target_type=environment');
    expect(guestLog.body.events.map((e: AuditEventBody) => [e.action, e.outcome])).toEqual([
      ['environment.delete', 'denied'],
      ['environment.accept_share_link', 'success'],
    ]);
    ok((await api.delete(`/agent/environments/${envId}`)).status);

    const factory = await api.post('/factory', { name: 'Audited' });
    ok(factory.status);
    const factoryId = factory.body.uid as string;
    const definition = {
      files: [{ path: 'factory.yaml', content: 'schemaVersion: v1alpha1\nname: Audited\n' }],
    };
    ok((await api.put(`/factory/${factoryId}/definition`, definition)).status);
    const hook = await api.post(`/factory/${factoryId}/webhooks`, { name: 'ci' });
    ok(hook.status);
    const hookId = hook.body.uid as string;
    ok((await api.post(`/factory/${factoryId}/webhooks/${hookId}/disable`)).status);
    const rotated = await api.post(`/factory/${factoryId}/webhooks/${hookId}/rotate-secret`);
    ok(rotated.status);
    ok((await api.delete(`/factory/${factoryId}/webhooks/${hookId}`)).status);
    ok((await api.delete(`/factory/${factoryId}`)).status);

    const agent = await api.post('/agent/identities', { name: 'Auditor' });
    ok(agent.status);
    const agentId = agent.body.uid as string;
    ok((await api.put(`/agent/identities/${agentId}`, { name: 'Auditor 2' })).status);
    const agentKey = await api.post(`/agent/identities/${agentId}/api-keys`, { name: 'ci' });
    ok(agentKey.status);
    ok((await api.delete(`/agent/identities/${agentId}/api-keys/${agentKey.body.id}`)).status);
    ok((await api.delete(`/agent/identities/${agentId}`)).status);
    ok((await api.delete('/secrets/AUDITED')).status);
    const teamKey = await api.post('/api-keys', { name: 'ci', role: 'member' });
    ok(teamKey.status);
    ok((await api.delete(`/api-keys/${teamKey.body.id}`)).status);

    const events = await allEvents(`since=${encodeURIComponent(since)}`);
    const actions = events.map((e) => e.action);
    expect(new Set(actions)).toEqual(
      new Set([
        'secret.create',
        'secret.update',
        'secret.delete',
        'run.create',
        'run.followup',
        'run.cancel',
        'schedule.create',
        'schedule.pause',
        'schedule.resume',
        'schedule.update',
        'schedule.delete',
        'environment.create',
        'environment.update',
        'environment.share_link',
        'environment.grant',
        'environment.revoke',
        'environment.delete',
        'factory.create',
        'factory.definition_put',
        'factory.delete',
        'webhook.create',
        'webhook.update',
        'webhook.rotate_secret',
        'webhook.delete',
        'agent.create',
        'agent.update',
        'agent.delete',
        'api_key.create',
        'api_key.revoke',
      ]),
    );
    // Newest first.
    const times = events.map((e) => e.occurred_at);
    expect([...times].sort().reverse()).toEqual(times);
    const runCreated = events.find((e) => e.action === 'run.create')!;
    expect(runCreated).toMatchObject({
      actor: {
        type: 'api_key',
        name: 'bootstrap',
        role: 'admin',
        on_behalf_of: { type: 'user', id: expect.any(String), name: 'Admin' },
      },
      target: { type: 'run', id: runId },
      outcome: 'success',
      request_id: 'audit-request-1',
      ip: expect.stringMatching(/127\.0\.0\.1$/),
    });
    expect(
      events.filter((e) => e.target?.id === teamKey.body.id).map((e) => [e.action, e.details]),
    ).toEqual([
      ['api_key.revoke', { name: 'ci' }],
      ['api_key.create', { name: 'ci', role: 'member', expires_at: null }],
    ]);
    expect(events.find((e) => e.action === 'webhook.rotate_secret')!.target).toEqual({
      type: 'webhook',
      id: hookId,
    });
    const written = JSON.stringify(events);
    for (const secret of [
      secretValue,
      hook.body.secret as string,
      rotated.body.secret as string,
      link.body.share_token as string,
      agentKey.body.key as string,
      teamKey.body.key as string,
    ]) {
      expect(secret).toBeTruthy();
      expect(written).not.toContain(secret);
    }
  });

  it('records a refused attempt as denied, and refuses the log to a member', async () => {
    ok((await api.post('/secrets', { name: 'ADMINS_ONLY', value: 'v-0123456789' })).status);
    expect((await member.put('/secrets/ADMINS_ONLY', { value: 'hijack' })).status).toBe(403);
    const read = await member.get('/audit-events');
    expect(read.status).toBe(403);
    expect(read.body.error).toMatch(/admin/);

    // The permission guard's refusals: the action is the permission refused.
    const denied = await allEvents('outcome=denied');
    expect(denied).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          action: 'secrets.write',
          actor: {
            type: 'api_key',
            id: memberKeyId,
            name: 'member',
            role: 'member',
            on_behalf_of: { type: 'user', id: memberUserId, name: 'Member' },
          },
          target: null,
          outcome: 'denied',
          details: {
            reason: expect.stringContaining('"secrets.write"'),
            method: 'PUT',
            path: '/api/v1/secrets/ADMINS_ONLY',
          },
        }),
        expect.objectContaining({ action: 'audit.read', outcome: 'denied' }),
      ]),
    );
    const value = await app.dataSource.query(
      `SELECT COUNT(*) AS n FROM audit_events WHERE action = 'secret.update' AND outcome = 'success'
          AND target_id = 'ADMINS_ONLY'`,
    );
    expect(Number(value[0].n)).toBe(0);
  });

  it("names the key that acted, on behalf of the user it belongs to, not the user's name alone", async () => {
    const created = await member.post('/agent/runs', { prompt: 'a member run' });
    ok(created.status);
    const events = await allEvents(`action=run.create&actor_id=${memberKeyId}`);
    expect(events.map((e) => [e.target?.id, e.actor])).toEqual([
      [
        created.body.run_id,
        {
          type: 'api_key',
          id: memberKeyId,
          name: 'member',
          role: 'member',
          on_behalf_of: { type: 'user', id: memberUserId, name: 'Member' },
        },
      ],
    ]);
  });

  it('pages with a cursor and filters by action, actor, target, outcome and time', async () => {
    const since = new Date().toISOString();
    for (let i = 0; i < 5; i += 1) {
      ok(
        (await api.post('/secrets', { name: `PAGED_${i}`, value: `value-${i}-0123456789` })).status,
      );
    }
    const query = `action=secret.create&since=${encodeURIComponent(since)}&limit=2`;
    const pages: AuditEventBody[][] = [];
    let cursor = '';
    for (let page = 0; page < 5; page += 1) {
      const res = await api.get(`/audit-events?${query}${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      pages.push(res.body.events);
      if (!res.body.page_info.has_next_page) {
        expect(res.body.page_info.next_cursor).toBe('');
        break;
      }
      cursor = res.body.page_info.next_cursor;
    }
    expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
    expect(pages.flat().map((e) => e.target!.id)).toEqual([
      'PAGED_4',
      'PAGED_3',
      'PAGED_2',
      'PAGED_1',
      'PAGED_0',
    ]);

    const first = await api.get(`/audit-events?${query}`);
    const otherFilters = await api.get(
      `/audit-events?action=secret.delete&cursor=${first.body.page_info.next_cursor}`,
    );
    expect(otherFilters.status).toBe(400);
    expect(otherFilters.body.detail).toMatch(/^cursor: /);

    const byTarget = await allEvents('target_type=secret&target_id=PAGED_3');
    expect(byTarget.map((e) => e.action)).toEqual(['secret.create']);
    const byResource = await allEvents(`action=secret.*&since=${encodeURIComponent(since)}`);
    expect(byResource).toHaveLength(5);
    const byActor = await allEvents(`actor_id=${memberKeyId}`);
    expect(byActor.length).toBeGreaterThan(0);
    expect(byActor.every((e) => e.actor.id === memberKeyId)).toBe(true);
    const until = await allEvents(`until=${encodeURIComponent(since)}&action=secret.create`);
    expect(until.some((e) => e.target!.id.startsWith('PAGED_'))).toBe(false);
  });

  it.each([
    ['outcome=maybe', /^outcome: must be one of success, denied, failed/],
    ['since=yesterday', /^since: must be an RFC 3339 timestamp/],
    ['until=2026-13-01', /^until: must be an RFC 3339 timestamp/],
    ['limit=201', /^limit: must be an integer from 1 to 200/],
    ['limit=0', /^limit: /],
    ['action=DROP%20TABLE', /^action: /],
    ['since=2026-02-01T00:00:00Z&until=2026-01-01T00:00:00Z', /^until: must be later than since/],
    ['cursor=not-a-cursor', /^cursor: /],
    ['actor_id=a&actor_id=b', /^actor_id: must be given at most once/],
  ])('refuses %s with 400 naming the field', async (query, detail) => {
    const res = await api.get(`/audit-events?${query}`);
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(detail);
  });

  it('exports the events of a time range as NDJSON with the CLI', async () => {
    const since = new Date(Date.now() - 60 * 60_000).toISOString();
    const expected = await allEvents(`since=${encodeURIComponent(since)}`);
    const result = await runCli(['audit', 'export', '--since', since], {
      ...env.childEnv(),
      AMBIENT_API_URL: app.baseUrl,
      AMBIENT_API_KEY: app.apiKey,
    });
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split('\n');
    const exported = lines.map((line) => JSON.parse(line) as AuditEventBody);
    // Reading the log is not a change: the export itself adds nothing.
    expect(exported.map((e) => e.id)).toEqual(expected.map((e) => e.id));
    expect(result.stderr).toContain(`${expected.length} audit event(s) exported`);

    const refused = await runCli(['audit', 'export', '--since', 'last week'], {
      ...env.childEnv(),
      AMBIENT_API_URL: app.baseUrl,
      AMBIENT_API_KEY: app.apiKey,
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('since: must be an RFC 3339 timestamp');
  });

  it('records keys the operator creates and revokes at the command line as the system', async () => {
    const cliEnv = env.childEnv();
    const made = await runCli(['api-keys', 'create', '--team', 'default', '--name', 'ops'], cliEnv);
    expect(made.code).toBe(0);
    const id = /\(id ([A-Za-z0-9]+)\)/.exec(made.stderr)![1];
    expect((await runCli(['api-keys', 'revoke', '--id', id], cliEnv)).code).toBe(0);
    const events = await allEvents(`target_type=api_key&target_id=${id}`);
    expect(events.map((e) => [e.action, e.actor.type, e.request_id])).toEqual([
      ['api_key.revoke', 'system', null],
      ['api_key.create', 'system', null],
    ]);
    expect(events[1].details).toEqual({ name: 'ops', role: 'admin', user_id: expect.any(String) });
  });

  it('deletes events past AMBIENT_AUDIT_RETENTION_DAYS in batches, keeping the rest', async () => {
    const teamId = (await app.dataSource.query(`SELECT id FROM teams WHERE name = 'default'`))[0]
      .id as string;
    const old = new Date(Date.now() - 31 * 24 * 60 * 60_000);
    const rows = Array.from({ length: 2500 }, (_, i) => [
      `Old${String(i).padStart(19, '0')}`,
      old,
      teamId,
      'system',
      'system',
      'retention.test',
      'success',
    ]);
    await app.dataSource.query(
      `INSERT INTO audit_events (id, occurred_at, team_id, actor_type, actor_id, action, outcome)
       VALUES ?`,
      [rows],
    );
    const before = Number(
      (await app.dataSource.query(`SELECT COUNT(*) AS n FROM audit_events`))[0].n,
    );
    await app.ambient.app.get(AuditRetentionSweeper, { strict: false }).sweepNow();
    const left = (await app.dataSource.query(
      `SELECT action, COUNT(*) AS n FROM audit_events GROUP BY action`,
    )) as { action: string; n: string }[];
    expect(left.find((r) => r.action === 'retention.test')).toBeUndefined();
    expect(left.reduce((sum, r) => sum + Number(r.n), 0)).toBe(before - 2500);
  });

  describe('transactionality', () => {
    afterEach(async () => {
      await app.dataSource.query(`DROP TRIGGER IF EXISTS audit_spec_fail`);
    });

    it('makes no change when its event cannot be written', async () => {
      ok((await api.post('/secrets', { name: 'KEPT', value: 'kept-0123456789' })).status);
      const [{ updated_at: before }] = await app.dataSource.query(
        `SELECT updated_at FROM team_secrets WHERE name = 'KEPT'`,
      );
      await app.dataSource.query(
        `CREATE TRIGGER audit_spec_fail BEFORE INSERT ON audit_events FOR EACH ROW
           IF NEW.action = 'secret.update' THEN
             SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'audit write refused by the spec';
           END IF`,
      );
      expect((await api.put('/secrets/KEPT', { value: 'changed-0123456789' })).status).toBe(500);
      const [{ updated_at: after }] = await app.dataSource.query(
        `SELECT updated_at FROM team_secrets WHERE name = 'KEPT'`,
      );
      expect(after).toEqual(before);
      expect(await allEvents('target_type=secret&target_id=KEPT&action=secret.update')).toEqual([]);
    });

    it('leaves no event when the change fails after the event was written', async () => {
      ok((await api.post('/secrets', { name: 'UNDELETABLE', value: 'u-0123456789' })).status);
      await app.dataSource.query(
        `CREATE TRIGGER audit_spec_fail BEFORE DELETE ON team_secrets FOR EACH ROW
           SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'delete refused by the spec'`,
      );
      expect((await api.delete('/secrets/UNDELETABLE')).status).toBe(500);
      expect(
        (await api.get('/secrets')).body.secrets.map((s: { name: string }) => s.name),
      ).toContain('UNDELETABLE');
      expect(await allEvents('target_id=UNDELETABLE&action=secret.delete')).toEqual([]);
    });
  });
});
