import { ApiKeysService } from '../src/modules/teams/api-keys.service';
import { TeamsService } from '../src/modules/teams/teams.service';
import { apiClient } from './support/api-client';
import { blockRunAsHarnessWould } from './support/blocked-runs';
import { startTestApp, TestApp } from './support/test-app';
import { useTestApp } from './support/use-test-app';

type Client = ReturnType<typeof apiClient>;

interface Approval {
  id: string;
  run_id: string;
  kind: string;
  tool: string;
  arguments: Record<string, unknown>;
  rule: Record<string, unknown> | null;
  summary: string;
  requested_at: string;
  decision: string | null;
  comment: string | null;
  decided_by: { type: string; id: string | null; name: string } | null;
  decided_at: string | null;
  can_decide: boolean;
}

/** An address nothing listens on: notification deliveries are recorded, never sent here. */
const HOOK_URL = 'http://127.0.0.1:9/approvals-hook';

/**
 * Deciding a BLOCKED run's requests through the API, on two api replicas sharing one database:
 * who may decide, what a decision writes (audit, notification, the run queued again once nothing
 * is undecided), and what is refused (409 twice or when the run does not wait). No worker runs:
 * a queued run stays QUEUED, and runs are put into BLOCKED as the harness would
 * (blockRunAsHarnessWould).
 */
describe('approvals: deciding requests of BLOCKED runs', () => {
  const { app, api, env } = useTestApp(
    'approvals_decide',
    ['api'],
    { 'egress.allow': '127.0.0.1:9' },
    {
      model: false,
    },
  );
  let replica: TestApp;
  let second: Client;
  let viewer: Client;
  let member: Client;
  let lead: Client;
  let agentKey: Client;
  let leadId: string;
  let endpointId: string;

  beforeAll(async () => {
    replica = await startTestApp(env, ['api']);
    second = apiClient(replica.baseUrl, replica.apiKey);
    const teams = app.ambient.app.get(TeamsService, { strict: false });
    const keys = app.ambient.app.get(ApiKeysService, { strict: false });
    const team = (await teams.findByName('default'))!;
    const person = async (displayName: string, role: 'viewer' | 'member', email: string) => {
      const user = await teams.createUser(team, { displayName, role, email });
      return { user, client: apiClient(app.baseUrl, (await keys.create(user, displayName)).key) };
    };
    viewer = (await person('Vera Viewer', 'viewer', 'vera@example.com')).client;
    member = (await person('Max Member', 'member', 'max@example.com')).client;
    const leadPerson = await person('Lea Lead', 'member', 'Lea@Example.com');
    lead = leadPerson.client;
    leadId = leadPerson.user.id;
    const agent = await api.post('/agent/identities', { name: 'deployer' });
    expect(agent.status).toBe(201);
    const key = await api.post(`/agent/identities/${agent.body.uid}/api-keys`, {});
    agentKey = apiClient(app.baseUrl, key.body.key as string);
    const endpoint = await api.post('/notification-endpoints', {
      url: HOOK_URL,
      events: ['approval.decided'],
    });
    expect(endpoint.status).toBe(201);
    endpointId = endpoint.body.id as string;
  });

  afterAll(async () => {
    await replica?.close();
  });

  const createRun = async (body: Record<string, unknown> = {}): Promise<string> => {
    const res = await api.post('/agent/runs', { prompt: 'Ship it', ...body });
    expect(res.status).toBe(200);
    return res.body.run_id as string;
  };
  const blockedRun = async (requests?: Parameters<typeof blockRunAsHarnessWould>[2]) => {
    const runId = await createRun();
    const ids = await blockRunAsHarnessWould(app, runId, requests);
    return { runId, ids };
  };
  const approvals = async (runId: string, client: Client = api): Promise<Approval[]> => {
    const res = await client.get(`/agent/runs/${runId}/approvals`);
    expect(res.status).toBe(200);
    return res.body.approvals as Approval[];
  };
  const decide = (client: Client, runId: string, id: string, body: Record<string, unknown>) =>
    client.post(`/agent/runs/${runId}/approvals/${id}`, body);
  const auditOf = async (runId: string) =>
    (await api.get(`/audit-events?action=approval.decide&target_id=${runId}`)).body.events as {
      outcome: string;
      actor: { name: string };
      details: Record<string, unknown> | null;
    }[];

  it("lists a blocked run's request in full, and the status message names it", async () => {
    const { runId, ids } = await blockedRun([
      {
        arguments: { command: 'git push origin main' },
        summary: 'run `git push origin main`',
      },
    ]);
    const run = (await api.get(`/agent/runs/${runId}`)).body;
    expect(run.state).toBe('BLOCKED');
    expect(run.status_message.message).toBe('Waiting for approval: run `git push origin main`');
    expect(await approvals(runId)).toEqual([
      {
        id: ids[0],
        run_id: runId,
        kind: 'approval',
        tool: 'run_command',
        arguments: { command: 'git push origin main' },
        rule: { command: '^git push', effect: 'ask' },
        summary: 'run `git push origin main`',
        requested_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        decision: null,
        comment: null,
        decided_by: null,
        decided_at: null,
        can_decide: true,
      },
    ]);
    // A viewer reads it but may not decide it.
    expect((await approvals(runId, viewer))[0].can_decide).toBe(false);
  });

  it('approve: the request is decided by the caller, audited, announced, and the run QUEUED again', async () => {
    const { runId, ids } = await blockedRun();
    const res = await decide(member, runId, ids[0], { decision: 'approve', comment: 'go ahead' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      approval: expect.objectContaining({
        id: ids[0],
        decision: 'approve',
        comment: 'go ahead',
        decided_by: { type: 'user', id: expect.any(String), name: 'Max Member' },
        decided_at: expect.any(String),
        can_decide: false,
      }),
      run_state: 'QUEUED',
    });
    const run = (await api.get(`/agent/runs/${runId}`)).body;
    expect(run.state).toBe('QUEUED');
    expect(run.status_message ?? null).toBeNull();
    expect(await auditOf(runId)).toEqual([
      expect.objectContaining({
        outcome: 'success',
        details: {
          approval_id: ids[0],
          kind: 'approval',
          tool: 'run_command',
          decision: 'approve',
        },
      }),
    ]);
    const deliveries = (await api.get(`/notification-endpoints/${endpointId}/deliveries`)).body
      .deliveries as { event: string; payload: { data: { approval?: { id: string } } } }[];
    const announced = deliveries.find((d) => d.payload.data.approval?.id === ids[0]);
    expect(announced).toMatchObject({
      event: 'approval.decided',
      payload: {
        type: 'approval.decided',
        data: {
          run: { id: runId, state: 'BLOCKED' },
          approval: { id: ids[0], decision: 'approve', decided_by: { name: 'Max Member' } },
        },
      },
    });
  });

  it('a run with two requests stays BLOCKED until both are decided; deny keeps its reason', async () => {
    const { runId, ids } = await blockedRun([{}, { kind: 'question' }]);
    const denied = await decide(api, runId, ids[0], { decision: 'deny', comment: 'not on Friday' });
    expect(denied.status).toBe(200);
    expect(denied.body.run_state).toBe('BLOCKED');
    expect(await api.runState(runId)).toBe('BLOCKED');
    const answered = await decide(api, runId, ids[1], { decision: 'answer', comment: 'main' });
    expect(answered.body).toMatchObject({
      approval: { kind: 'question', decision: 'answer', comment: 'main' },
      run_state: 'QUEUED',
    });
    expect((await approvals(runId)).map((a) => [a.decision, a.comment])).toEqual([
      ['deny', 'not on Friday'],
      ['answer', 'main'],
    ]);
  });

  it('refuses a decision that does not fit the request, naming the field, and changes nothing', async () => {
    const { runId, ids } = await blockedRun([{}, { kind: 'question' }]);
    const cases: [string, Record<string, unknown>, RegExp][] = [
      [
        ids[0],
        { decision: 'answer', comment: 'x' },
        /^decision: this request asks for an approval/,
      ],
      [ids[1], { decision: 'approve' }, /^decision: this request is a question/],
      [ids[1], { decision: 'answer', comment: '  ' }, /^comment: is the answer to the question/],
      [ids[0], { decision: 'maybe' }, /^decision: /],
      [ids[0], { decision: 'deny', comment: 'x'.repeat(20_001) }, /^comment: /],
    ];
    for (const [id, body, detail] of cases) {
      const res = await decide(api, runId, id, body);
      expect({ status: res.status, detail: res.body.detail }).toEqual({
        status: 400,
        detail: expect.stringMatching(detail),
      });
    }
    const unknown = await decide(api, runId, '00000000-0000-0000-0000-000000000000', {
      decision: 'approve',
    });
    expect(unknown.status).toBe(404);
    expect((await approvals(runId)).every((a) => a.decision === null)).toBe(true);
    expect(await api.runState(runId)).toBe('BLOCKED');
    expect(await auditOf(runId)).toEqual([]);
  });

  it('deciding twice is 409 naming who decided first; a run that is not BLOCKED is 409', async () => {
    const { runId, ids } = await blockedRun();
    expect((await decide(member, runId, ids[0], { decision: 'approve' })).status).toBe(200);
    const again = await decide(api, runId, ids[0], { decision: 'deny' });
    expect(again.status).toBe(409);
    expect(again.body.detail).toMatch(
      new RegExp(
        `^approval request "${ids[0]}" was already decided \\(approve\\) by Max Member at `,
      ),
    );
    expect((await approvals(runId))[0]).toMatchObject({ decision: 'approve', comment: null });

    // Undecided requests of a run that does not wait for them (set FAILED here by SQL; a crash
    // between the request and BLOCKED can leave such rows) are refused, and stay undecided.
    const { runId: other, ids: otherIds } = await blockedRun();
    await app.dataSource.query(`UPDATE runs SET state = 'FAILED' WHERE id = ?`, [other]);
    const notBlocked = await decide(api, other, otherIds[0], { decision: 'approve' });
    expect(notBlocked.status).toBe(409);
    expect(notBlocked.body.detail).toMatch(/^the run is FAILED, not BLOCKED/);
    expect((await approvals(other))[0].decision).toBeNull();
  });

  it('two replicas deciding one request at once: one wins, the other gets 409', async () => {
    for (let round = 0; round < 3; round++) {
      const { runId, ids } = await blockedRun();
      const results = await Promise.all([
        decide(api, runId, ids[0], { decision: 'approve' }),
        decide(second, runId, ids[0], { decision: 'deny', comment: 'no' }),
      ]);
      expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
      const winner = results.find((r) => r.status === 200)!.body.approval as Approval;
      expect((await approvals(runId))[0].decision).toBe(winner.decision);
      expect(await api.runState(runId)).toBe('QUEUED');
      expect(await auditOf(runId)).toHaveLength(1);
    }
  });

  it('viewers and agent keys may not decide (403, audited as denied); nothing changes', async () => {
    const { runId, ids } = await blockedRun();
    const byViewer = await decide(viewer, runId, ids[0], { decision: 'approve' });
    expect(byViewer.status).toBe(403);
    expect(byViewer.body.detail).toBe(
      'role "viewer" lacks permission "approvals.decide" (held by: admin, member)',
    );
    const byAgent = await decide(agentKey, runId, ids[0], { decision: 'approve' });
    expect(byAgent.status).toBe(403);
    expect(byAgent.body.detail).toMatch(/only human users can decide approval requests$/);
    expect((await approvals(runId))[0].decision).toBeNull();
    expect(await api.runState(runId)).toBe('BLOCKED');
  });

  it("an agent identity's approvers (by e-mail or id) and admins decide its runs; other members get 403", async () => {
    const agent = await api.post('/agent/identities', {
      name: 'careful',
      approvers: ['LEA@example.com'],
    });
    expect(agent.status).toBe(201);
    expect(agent.body.approvers).toEqual(['lea@example.com']);
    const runOf = async () => {
      const runId = await createRun({ agent_identity_uid: agent.body.uid });
      return { runId, ids: await blockRunAsHarnessWould(app, runId) };
    };
    const first = await runOf();
    expect((await approvals(first.runId, member))[0].can_decide).toBe(false);
    const refused = await decide(member, first.runId, first.ids[0], { decision: 'approve' });
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toBe(
      'agent "careful" names who may decide its runs\' requests (lea@example.com) and team ' +
        'admins; you are not one of them',
    );
    expect((await auditOf(first.runId)).map((e) => e.outcome)).toEqual(['denied']);
    expect((await approvals(first.runId, lead))[0].can_decide).toBe(true);
    expect((await decide(lead, first.runId, first.ids[0], { decision: 'approve' })).status).toBe(
      200,
    );
    // By user id, and an admin always.
    const updated = await api.put(`/agent/identities/${agent.body.uid}`, { approvers: [leadId] });
    expect(updated.status).toBe(200);
    const second = await runOf();
    expect((await decide(lead, second.runId, second.ids[0], { decision: 'deny' })).status).toBe(
      200,
    );
    const third = await runOf();
    expect((await decide(api, third.runId, third.ids[0], { decision: 'approve' })).status).toBe(
      200,
    );
  });
  it('the inbox lists pending requests newest first with their run, in cursor pages, then decided ones', async () => {
    const older = await createRun({ title: 'Inbox older' });
    const [olderId] = await blockRunAsHarnessWould(app, older);
    const newer = await createRun({ title: 'Inbox newer' });
    const [newerId] = await blockRunAsHarnessWould(app, newer, [{ kind: 'question' }]);
    const page = await api.get('/agent/approvals?limit=1');
    expect(page.status).toBe(200);
    expect(page.body.approvals).toEqual([
      expect.objectContaining({
        id: newerId,
        run_id: newer,
        kind: 'question',
        run_title: 'Inbox newer',
        run_state: 'BLOCKED',
        decision: null,
        can_decide: true,
      }),
    ]);
    expect(page.body.page_info).toEqual({ has_next_page: true, next_cursor: expect.any(String) });
    const next = await api.get(
      `/agent/approvals?limit=1&cursor=${page.body.page_info.next_cursor}`,
    );
    expect(next.body.approvals.map((a: Approval) => a.id)).toEqual([olderId]);
    expect((await viewer.get('/agent/approvals?limit=1')).body.approvals[0].can_decide).toBe(false);

    expect((await decide(api, older, olderId, { decision: 'deny' })).status).toBe(200);
    const pendingIds = async (state: string) =>
      (
        (await api.get(`/agent/approvals?state=${state}&limit=200`)).body.approvals as Approval[]
      ).map((a) => a.id);
    expect(await pendingIds('pending')).toContain(newerId);
    expect(await pendingIds('pending')).not.toContain(olderId);
    const decided = (await api.get('/agent/approvals?state=decided&limit=1')).body.approvals;
    expect(decided[0]).toMatchObject({ id: olderId, decision: 'deny', run_state: 'QUEUED' });
    const all = await pendingIds('all');
    expect(all.indexOf(newerId)).toBeLessThan(all.indexOf(olderId));

    const wrongState = await api.get(
      `/agent/approvals?state=decided&cursor=${page.body.page_info.next_cursor}`,
    );
    expect(wrongState.status).toBe(400);
    expect(wrongState.body.detail).toMatch(/^cursor: /);
    const badState = await api.get('/agent/approvals?state=open');
    expect(badState.status).toBe(400);
    expect(badState.body.detail).toMatch(/^state: must be one of pending, decided, all/);
  });

  it('a follow-up to a BLOCKED run answers its question and denies its approval, and queues it', async () => {
    const { runId, ids } = await blockedRun([{}, { kind: 'question' }]);
    const res = await member.post(`/agent/runs/${runId}/followups`, {
      message: 'Use the release branch, and do not push.',
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ followup_id: expect.any(String), outcome: 'handoff_execution' });
    expect(await api.runState(runId)).toBe('QUEUED');
    const decider = { type: 'user', id: expect.any(String), name: 'Max Member' };
    expect(await approvals(runId)).toEqual([
      expect.objectContaining({
        id: ids[0],
        decision: 'deny',
        comment: 'Use the release branch, and do not push.',
        decided_by: decider,
      }),
      expect.objectContaining({
        id: ids[1],
        decision: 'answer',
        comment: 'Use the release branch, and do not push.',
        decided_by: decider,
      }),
    ]);
    // The message is the answer, not one more user turn for the next execution.
    const [followup] = (await app.dataSource.query(
      `SELECT consumed_at FROM run_followups WHERE run_id = ?`,
      [runId],
    )) as { consumed_at: Date | null }[];
    expect(followup.consumed_at).not.toBeNull();
    expect((await auditOf(runId)).map((e) => e.details?.via)).toEqual(['followup', 'followup']);
  });

  it('cancel ends a BLOCKED run at once and denies what it waited for; deciding then is 409', async () => {
    const { runId, ids } = await blockedRun();
    const res = await member.post(`/agent/runs/${runId}/cancel`);
    expect(res.status).toBe(200);
    const run = (await api.get(`/agent/runs/${runId}`)).body;
    expect(run.state).toBe('CANCELLED');
    expect(run.status_message.message).toBe('Cancelled by Max Member');
    expect((await approvals(runId))[0]).toMatchObject({
      decision: 'deny',
      comment: 'the run was cancelled by Max Member',
      can_decide: false,
    });
    const late = await decide(api, runId, ids[0], { decision: 'approve' });
    expect(late.status).toBe(409);
    expect(late.body.detail).toMatch(/was already decided \(deny\) by Max Member/);
    const events = (await api.get(`/agent/runs/${runId}/timeline`)).body.events.map(
      (e: { event_type: string }) => e.event_type,
    );
    expect(events.slice(-2)).toEqual(['oz_run_blocked', 'oz_run_cancelled']);
  });
});
