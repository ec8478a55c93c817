import { ApiKeysService } from '../../src/modules/teams/api-keys.service';
import { TeamsService } from '../../src/modules/teams/teams.service';
import { apiClient } from '../support/api-client';
import { useTestApp } from '../support/use-test-app';
import { waitFor } from '../support/wait';

/**
 * Sharing an environment with another team needs that team's consent and pins what it accepted:
 * the attack where an owner edits a shared environment so that its setup prints the guest's
 * secrets, and watches `setup_failed` flip on the guest's runs, is refused at each step.
 */
describe('environment sharing: consent, pinned versions, no guest secrets for the owner', () => {
  const { app, api } = useTestApp('environment-sharing', ['api', 'worker']);
  let guestAdmin: ReturnType<typeof apiClient>;
  let guestMember: ReturnType<typeof apiClient>;
  let guestTeamId: string;
  let ownerTeamId: string;

  beforeAll(async () => {
    const keys = app.ambient.app.get(ApiKeysService);
    ownerTeamId = (await keys.authenticate(app.apiKey))!.teamId;
    const teams = app.ambient.app.get(TeamsService);
    const guests = await teams.createTeam('guests');
    guestTeamId = guests.id;
    const admin = await teams.createUser(guests, { displayName: 'Guest admin', role: 'admin' });
    const member = await teams.createUser(guests, { displayName: 'Guest member', role: 'member' });
    guestAdmin = apiClient(app.baseUrl, (await keys.create(admin, 'admin')).key);
    guestMember = apiClient(app.baseUrl, (await keys.create(member, 'member')).key);
    // The same name in both teams: the owner's environment will ask for it.
    expect((await api.post('/secrets', { name: 'B_SECRET', value: 'owner-value' })).status).toBe(
      201,
    );
    const guestSecret = await guestAdmin.post('/secrets', {
      name: 'B_SECRET',
      value: 'B-SECRET-7731',
    });
    expect(guestSecret.status).toBe(201);
  });

  const finished = (runId: string, client = api) =>
    waitFor(
      async () => (await client.get(`/agent/runs/${runId}`)).body,
      (run) => ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(run.state),
      { what: `run ${runId} to finish` },
    );

  const runIn = async (uid: string, client: ReturnType<typeof apiClient>, extra: object = {}) => {
    const created = await client.post('/agent/runs', {
      prompt: 'hi',
      config: { environment_id: uid, ...extra },
    });
    expect(created.status).toBe(200);
    return finished(created.body.run_id, client);
  };

  it('a grant counts only once an admin of the receiving team accepts a version', async () => {
    const created = await api.post('/agent/environments', {
      name: 'offered',
      setup_commands: ['true'],
    });
    const uid = created.body.uid as string;
    expect(created.body.version).toBe(1);
    expect(
      (await api.post(`/agent/environments/${uid}/grants`, { team_id: guestTeamId })).status,
    ).toBe(204);

    // Not accepted: the guest neither sees it nor runs in it.
    expect((await guestAdmin.get('/agent/environments')).body.environments).toEqual([]);
    expect((await guestAdmin.get(`/agent/environments/${uid}`)).status).toBe(404);
    const refused = await guestAdmin.post('/agent/runs', {
      prompt: 'x',
      config: { environment_id: uid },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toContain('config.environment_id');

    // Only an admin of the receiving team reviews and accepts.
    expect((await guestMember.get('/agent/environments/pending')).status).toBe(403);
    expect(
      (await guestMember.post(`/agent/environments/${uid}/accept`, { version: 1 })).status,
    ).toBe(403);
    const pending = await guestAdmin.get('/agent/environments/pending');
    expect(pending.status).toBe(200);
    expect(pending.body.environments).toEqual([
      expect.objectContaining({
        uid,
        scope: { type: 'Team', uid: ownerTeamId },
        version: 1,
        config: expect.objectContaining({ name: 'offered', setup_commands: ['true'] }),
        accepted_version: null,
        accepted_config: null,
      }),
    ]);
    // The owner's own team has nothing to accept.
    expect((await api.get('/agent/environments/pending')).body.environments).toEqual([]);

    const stale = await guestAdmin.post(`/agent/environments/${uid}/accept`, { version: 2 });
    expect(stale.status).toBe(409);
    const bad = await guestAdmin.post(`/agent/environments/${uid}/accept`, { version: 'one' });
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toContain('version');
    expect((await guestAdmin.get('/agent/environments')).body.environments).toEqual([]);

    const accepted = await guestAdmin.post(`/agent/environments/${uid}/accept`, { version: 1 });
    expect(accepted.status).toBe(200);
    expect(accepted.body).toMatchObject({ uid, access: 'guest', version: 1 });
    expect((await guestMember.get('/agent/environments')).body.environments).toEqual([
      expect.objectContaining({ uid, access: 'guest' }),
    ]);
    expect((await guestAdmin.get('/agent/environments/pending')).body.environments).toEqual([]);
    const log = await guestAdmin.get('/audit-events?target_type=environment');
    expect(log.body.events.map((e: { action: string }) => e.action)).toContain(
      'environment.accept',
    );

    // Declining ends the team's grant.
    expect((await guestAdmin.post(`/agent/environments/${uid}/decline`)).status).toBe(204);
    expect((await guestMember.get(`/agent/environments/${uid}`)).status).toBe(404);
  });

  it('a share link is redeemed by an admin of the receiving team only', async () => {
    const created = await api.post('/agent/environments', { name: 'linked' });
    const uid = created.body.uid as string;
    const link = await api.post(`/agent/environments/${uid}/share-link`);
    const token = link.body.share_token as string;
    expect((await guestMember.post(`/agent/environments/shared/${token}/accept`)).status).toBe(403);
    expect((await guestMember.get(`/agent/environments/${uid}`)).status).toBe(404);
    const redeemed = await guestAdmin.post(`/agent/environments/shared/${token}/accept`);
    expect(redeemed.status).toBe(200);
    expect(redeemed.body).toMatchObject({ uid, access: 'guest', version: 1 });
    expect((await guestMember.get(`/agent/environments/${uid}`)).status).toBe(200);
  });

  it("an owner's change reaches the guest only once accepted; the owner's setup never gets a guest secret", async () => {
    const created = await api.post('/agent/environments', {
      name: 'innocent',
      setup_commands: ['true'],
    });
    const uid = created.body.uid as string;
    await api.post(`/agent/environments/${uid}/grants`, { team_id: guestTeamId });
    expect(
      (await guestAdmin.post(`/agent/environments/${uid}/accept`, { version: 1 })).status,
    ).toBe(200);

    // The owner turns the setup against the guest.
    const leaky = await api.patch(`/agent/environments/${uid}`, {
      name: 'leaky',
      secrets: [{ name: 'B_SECRET' }],
      setup_commands: ['echo "LEAK:$B_SECRET" >&2; exit 7'],
    });
    expect(leaky.status).toBe(200);
    expect(leaky.body.version).toBe(2);

    // The guest still sees and runs in the version it accepted.
    const seen = await guestMember.get(`/agent/environments/${uid}`);
    expect(seen.body).toMatchObject({
      version: 1,
      config: { name: 'innocent', setup_commands: ['true'], secrets: [] },
    });
    expect((await runIn(uid, guestMember)).state).toBe('SUCCEEDED');
    const pending = (await guestAdmin.get('/agent/environments/pending')).body.environments;
    expect(pending).toEqual([
      expect.objectContaining({
        uid,
        version: 2,
        config: expect.objectContaining({ name: 'leaky', secrets: [{ name: 'B_SECRET' }] }),
        accepted_version: 1,
        accepted_config: expect.objectContaining({ name: 'innocent', setup_commands: ['true'] }),
      }),
    ]);

    // Even once accepted, the owner's names do not resolve in the guest's store, and the run's own
    // secrets go to its agent, not to the owner's setup.
    expect(
      (await guestAdmin.post(`/agent/environments/${uid}/accept`, { version: 2 })).status,
    ).toBe(200);
    const failed = await runIn(uid, guestMember, { secrets: [{ name: 'B_SECRET' }] });
    expect(failed.state).toBe('FAILED');
    expect(failed.status_message.error_code).toBe('environment_setup_failed');
    expect(failed.status_message.message).toContain('LEAK:');
    expect(JSON.stringify(failed)).not.toContain('B-SECRET-7731');
    const timeline = JSON.stringify(
      (await guestMember.get(`/agent/runs/${failed.run_id}/timeline`)).body,
    );
    expect(timeline).toContain('secrets_skipped');
    expect(timeline).toContain(`environment ${uid} secrets.0.name`);
    expect(timeline).not.toContain('B-SECRET-7731');

    // The guest sees its own setup outcome; the owner learns nothing of the guest's runs.
    expect((await guestMember.get(`/agent/environments/${uid}`)).body.setup_failed).toBe(true);
    const owners = await api.get(`/agent/environments/${uid}`);
    expect(owners.body.setup_failed).toBe(false);
    expect(owners.body.last_task_created).toBeUndefined();
    expect(owners.body.last_task_run_timestamp).toBeNull();
  });
});
