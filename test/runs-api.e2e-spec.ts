import { DataSource } from 'typeorm';
import { RunArtifactRepository } from '../src/modules/artifacts/run-artifact.repository';
import { ApiKeysService } from '../src/modules/teams/api-keys.service';
import { TeamsService } from '../src/modules/teams/teams.service';
import { RunCreationService } from '../src/modules/runs/run-creation.service';
import { apiClient } from './support/api-client';
import { useTestApp } from './support/use-test-app';

/** The API role alone: runs stay QUEUED, so every answer here is about the API itself. */
describe('runs API (api role only)', () => {
  let dataSource: DataSource;

  const { app, api } = useTestApp('runs_api', ['api']);

  beforeAll(async () => {
    dataSource = app.dataSource;
  });

  const countRuns = async () =>
    Number((await dataSource.query('SELECT COUNT(*) AS n FROM runs'))[0].n);

  describe('authentication and errors', () => {
    it('refuses a missing or wrong key with 401 in the Oz Error model', async () => {
      for (const auth of [
        undefined,
        'Bearer nope',
        'Bearer amb_AAAAAAAAAAAA_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB',
      ]) {
        const req = api.raw().get(`${api.prefix}/agent/runs`);
        const res = auth ? await req.set('Authorization', auth) : await req;
        expect(res.status).toBe(401);
        expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(res.body).toMatchObject({
          type: expect.stringMatching(/authentication-required$/),
          title: expect.any(String),
          status: 401,
          error: expect.any(String),
          instance: `${api.prefix}/agent/runs`,
        });
      }
    });

    it('answers unknown paths with 404 in the same model, for any method', async () => {
      const get = await api.get('/_stainless_unknown_path?x=1');
      const post = await api.post('/agent/nothing-here', {});
      for (const res of [get, post]) {
        expect(res.status).toBe(404);
        expect(res.body.type).toMatch(/resource-not-found$/);
      }
    });

    it('refuses invalid JSON bodies with 400', async () => {
      const res = await api
        .raw()
        .post(`${api.prefix}/agent/runs`)
        .set('Authorization', `Bearer ${app.apiKey}`)
        .set('Content-Type', 'application/json')
        .send('{"prompt": ');
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(/JSON/);
    });
  });

  describe('POST /agent/runs validation: bad input names the field and changes nothing', () => {
    const cases: [string, unknown, RegExp][] = [
      ['missing prompt', {}, /^prompt:/],
      ['wrong type', { prompt: 5 }, /^prompt: must be a string/],
      ['wrong enum', { prompt: 'x', mode: 'fast' }, /^mode:/],
      [
        'nested wrong type',
        { prompt: 'x', config: { model_id: 5 } },
        /^config\.model_id: must be a string/,
      ],
      [
        'bad environment id',
        { prompt: 'x', config: { environment_id: 'short' } },
        /^config\.environment_id:/,
      ],
      [
        'idle timeout out of range',
        { prompt: 'x', config: { idle_timeout_minutes: 61 } },
        /^config\.idle_timeout_minutes:/,
      ],
      [
        'unknown model',
        { prompt: 'x', config: { model_id: 'nope' } },
        /^config\.model_id: unknown model/,
      ],
      [
        'model without provider key',
        { prompt: 'x', config: { model_id: 'locked-model' } },
        /^config\.model_id: .*AMBIENT_TEST_NEVER_SET_KEY/,
      ],
      [
        'bad harness',
        { prompt: 'x', config: { harness: { type: 'vim' } } },
        /^config\.harness\.type:/,
      ],
      [
        'mcp server with two transports',
        { prompt: 'x', config: { mcp_servers: { a: { command: 'x', url: 'https://e.x' } } } },
        /^config\.mcp_servers\.a:/,
      ],
      [
        'too many attachments',
        {
          prompt: 'x',
          attachments: Array.from({ length: 6 }, () => ({
            file_name: 'a',
            mime_type: 'text/plain',
            data: 'YQ==',
          })),
        },
        /^attachments:/,
      ],
      [
        'attachment not base64',
        { prompt: 'x', attachments: [{ file_name: 'a', mime_type: 'text/plain', data: '***' }] },
        /^attachments\.0\.data:/,
      ],
      [
        'metadata key invalid',
        { prompt: 'x', metadata: { 'bad key': 'v' } },
        /^metadata: key "bad key"/,
      ],
      [
        'metadata value too long',
        { prompt: 'x', metadata: { k: 'v'.repeat(257) } },
        /^metadata\.k: must be at most 256 bytes/,
      ],
      [
        'metadata not a string',
        { prompt: 'x', metadata: { k: 1 } },
        /^metadata\.k: must be a string/,
      ],
      [
        'too many metadata keys',
        {
          prompt: 'x',
          metadata: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v'])),
        },
        /^metadata: at most 20 keys/,
      ],
      [
        'unknown parent',
        { prompt: 'x', parent_run_id: '00000000-0000-0000-0000-000000000000' },
        /^parent_run_id:/,
      ],
      [
        'unknown agent identity',
        { prompt: 'x', agent_identity_uid: 'nobody' },
        /^agent_identity_uid:/,
      ],
    ];
    it.each(cases)('%s', async (_name, body, detail) => {
      const before = await countRuns();
      const res = await api.post('/agent/runs', body);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({
        status: 400,
        type: expect.stringMatching(/invalid-request$/),
      });
      expect(res.body.detail).toMatch(detail);
      expect(await countRuns()).toBe(before);
    });
  });

  describe('creating and reading runs', () => {
    it('stores every one of many concurrent creations with its own metadata and first event', async () => {
      // Concurrent creations share commits (NewRunWriter); each must still come out whole.
      const created = await Promise.all(
        Array.from({ length: 24 }, (_, i) =>
          api.post('/agent/runs', { prompt: `burst ${i}`, metadata: { burst: String(i) } }),
        ),
      );
      expect(created.map((r) => r.status)).toEqual(created.map(() => 200));
      // Answers are not hashed for an ETag (live state; a cost on every creation).
      expect(created[0].headers.etag).toBeUndefined();
      for (const [i, res] of created.entries()) {
        const run = (await api.get(`/agent/runs/${res.body.run_id}`)).body;
        expect(run).toMatchObject({ prompt: `burst ${i}`, metadata: { burst: String(i) } });
        const events = (await api.get(`/agent/runs/${run.run_id}/timeline`)).body.events;
        expect(events[0]).toMatchObject({ event_type: 'oz_run_created', run_id: run.run_id });
      }
      const found = await api.get('/agent/runs?metadata[burst]=7');
      expect(found.body.runs.map((r: { prompt: string }) => r.prompt)).toEqual(['burst 7']);
    });

    it('stores a burst of creations with the largest prompts whole (a shared commit splits its INSERTs)', async () => {
      // Submitted in one tick, the creations after the first two share one commit: 48 × 400 KB of
      // UTF-8 would be more than MariaDB's default 16 MiB packet as a single INSERT.
      const [team] = (await dataSource.query(`SELECT id FROM teams WHERE name = 'default'`)) as {
        id: string;
      }[];
      const creator = app.ambient.app.get(RunCreationService);
      const prompt = (i: number) => `${i} ${'😀'.repeat(99_990)}`;
      const runs = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          creator.create({ teamId: team.id, creatorId: null, source: 'API', prompt: prompt(i) }),
        ),
      );
      const stored = (await dataSource.query(`SELECT id, prompt FROM runs WHERE id IN (?)`, [
        runs.map((run) => run.id),
      ])) as { id: string; prompt: string }[];
      const byId = new Map(stored.map((row) => [row.id, row.prompt]));
      for (const [i, run] of runs.entries()) expect(byId.get(run.id)).toBe(prompt(i));
    });

    it('creates a run (and through the legacy path) and returns the full RunItem', async () => {
      const created = await api.post('/agent/runs', {
        prompt: 'Fix the flaky test\nin module X',
        skill: 'acme/web:.agents/skills/fixer/SKILL.md',
        config: { model_id: 'fake-model', base_prompt: 'Be brief' },
        metadata: { ticket_id: 'VIS-238' },
        attachments: [{ file_name: 'notes.txt', mime_type: 'text/plain', data: 'aGVsbG8=' }],
      });
      expect(created.status).toBe(200);
      const run = (await api.get(`/agent/runs/${created.body.run_id}`)).body;
      expect(run).toMatchObject({
        run_id: created.body.run_id,
        task_id: created.body.run_id,
        root_run_id: created.body.run_id,
        title: 'Fix the flaky test',
        state: 'QUEUED',
        prompt: 'Fix the flaky test\nin module X',
        started_at: null,
        finished_at: null,
        source: 'API',
        execution_location: 'REMOTE',
        agent_config: {
          name: 'fixer',
          model_id: 'fake-model',
          base_prompt: 'Be brief',
          skill_spec: 'acme/web:.agents/skills/fixer/SKILL.md',
        },
        agent_skill: { name: 'fixer' },
        metadata: { ticket_id: 'VIS-238' },
        scope: { type: 'Team' },
        creator: { uid: expect.any(String), display_name: 'Admin', type: 'user' },
        is_run_type_cancellable: true,
        debug_agent_available: false,
        artifacts: [],
      });
      expect(new Date(run.created_at).toISOString()).toBe(run.created_at);
      const events = (await api.get(`/agent/runs/${run.run_id}/timeline`)).body.events;
      expect(events).toEqual([
        expect.objectContaining({
          event_type: 'oz_run_created',
          run_id: run.run_id,
          event_uuid: expect.any(String),
        }),
      ]);

      const legacy = await api.post('/agent/run', { prompt: 'legacy path' });
      expect(legacy.status).toBe(200);
      expect(legacy.body.state).toBe('QUEUED');
    });

    it('links child runs to their parent and root, and inherits metadata under its own', async () => {
      const parent = (
        await api.post('/agent/runs', { prompt: 'parent', metadata: { a: '1', b: '1' } })
      ).body;
      const child = (
        await api.post('/agent/runs', {
          prompt: 'child',
          parent_run_id: parent.run_id,
          metadata: { b: '2' },
        })
      ).body;
      const grandchild = (
        await api.post('/agent/runs', { prompt: 'grandchild', parent_run_id: child.run_id })
      ).body;
      const item = (await api.get(`/agent/runs/${grandchild.run_id}`)).body;
      expect(item).toMatchObject({
        parent_run_id: child.run_id,
        root_run_id: parent.run_id,
        source: 'ORCHESTRATION',
        metadata: { a: '1', b: '2' },
      });
      const descendants = await api.get(
        `/agent/runs?ancestor_run_id=${parent.run_id}&sort_by=created_at&sort_order=asc`,
      );
      expect(descendants.body.runs.map((r: { run_id: string }) => r.run_id)).toEqual([
        child.run_id,
        grandchild.run_id,
      ]);
    });

    it('finds a run by an external reference it reported, and 404s otherwise', async () => {
      const run = (await api.post('/agent/runs', { prompt: 'with a reference' })).body;
      await app.ambient.app.get(RunArtifactRepository).record(
        {
          id: run.run_id,
          teamId: (await dataSource.query('SELECT team_id FROM runs WHERE id = ?', [run.run_id]))[0]
            .team_id,
        },
        'EXTERNAL_REFERENCE',
        {
          reference_type: 'linear_issue',
          url: 'https://linear.app/acme/issue/ENG-1',
          title: 'ENG-1',
        },
      );
      const found = await api.get(
        '/agent/run-by-external-reference?url=' +
          encodeURIComponent('https://linear.app/acme/issue/ENG-1'),
      );
      expect(found.status).toBe(200);
      expect(found.body).toEqual({ run_id: run.run_id });
      const listed = await api.get(`/agent/runs?artifact_type=EXTERNAL_REFERENCE`);
      expect(listed.body.runs.map((r: { run_id: string }) => r.run_id)).toEqual([run.run_id]);
      expect(listed.body.runs[0].artifacts[0]).toMatchObject({
        artifact_type: 'EXTERNAL_REFERENCE',
        data: { title: 'ENG-1' },
      });
      const missing = await api.get(
        '/agent/run-by-external-reference?url=' + encodeURIComponent('https://nowhere.example/x'),
      );
      expect(missing.status).toBe(404);
      expect((await api.get('/agent/run-by-external-reference')).status).toBe(400);
    });

    it('lists the model catalogue with the default and disabled models', async () => {
      const res = await api.get('/agent/models');
      expect(res.status).toBe(200);
      expect(res.body.default_model_id).toBe('fake-model');
      expect(res.body.models).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            id: 'fake-model',
            provider: 'UNKNOWN',
            vision_supported: false,
            disabled: false,
          }),
          expect.objectContaining({
            id: 'locked-model',
            provider: 'ANTHROPIC',
            disable_reason: 'ADMIN_DISABLED',
            disabled: true,
          }),
        ]),
      );
      expect(
        res.body.models.find((m: { id: string }) => m.id === 'fake-model').input_cost_per_token_usd,
      ).toBeCloseTo(1e-6);
    });
  });

  describe('cancel and follow-ups by state', () => {
    const setRun = (runId: string, columns: string) =>
      dataSource.query(`UPDATE runs SET ${columns} WHERE id = ?`, [runId]);
    const newRun = async () =>
      (await api.post('/agent/runs', { prompt: 'to steer' })).body.run_id as string;

    it('cancels a queued run at once', async () => {
      const runId = await newRun();
      const res = await api.post(`/agent/runs/${runId}/cancel`);
      expect(res.status).toBe(200);
      expect(res.body).toBe(runId);
      const run = (await api.get(`/agent/runs/${runId}`)).body;
      expect(run.state).toBe('CANCELLED');
      expect(run.finished_at).not.toBeNull();
      const types = (await api.get(`/agent/runs/${runId}/timeline`)).body.events.map(
        (e: { event_type: string }) => e.event_type,
      );
      expect(types).toEqual(['oz_run_created', 'oz_run_cancelled']);
    });

    // BLOCKED runs may be cancelled (test/approvals-decide.e2e-spec.ts).
    it.each(['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'])(
      'refuses to cancel a %s run with 400',
      async (state) => {
        const runId = await newRun();
        await setRun(runId, `state = '${state}'`);
        const res = await api.post(`/agent/runs/${runId}/cancel`);
        expect(res.status).toBe(400);
        expect(res.body.type).toMatch(/invalid-request$/);
        expect(await api.runState(runId)).toBe(state);
      },
    );

    it('answers 409 conflict (retryable) for a PENDING run', async () => {
      const runId = await newRun();
      await setRun(runId, `state = 'PENDING'`);
      const res = await api.post(`/agent/runs/${runId}/cancel`);
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({ retryable: true, type: expect.stringMatching(/conflict$/) });
    });

    it('answers 422 for run types that cannot be cancelled', async () => {
      const runId = await newRun();
      await setRun(runId, `source = 'GITHUB_ACTION'`);
      const res = await api.post(`/agent/runs/${runId}/cancel`);
      expect(res.status).toBe(422);
      expect(res.body.type).toMatch(/operation-not-supported$/);
      expect((await api.get(`/agent/runs/${runId}`)).body.is_run_type_cancellable).toBe(false);
    });

    it('queues a follow-up for a queued run and refuses an empty one', async () => {
      const runId = await newRun();
      const res = await api.post(`/agent/runs/${runId}/followups`, {
        message: 'also update the docs',
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ followup_id: null, outcome: 'queued_prompt' });
      const empty = await api.post(`/agent/runs/${runId}/followups`, { message: '  ' });
      expect(empty.status).toBe(400);
      expect(empty.body.detail).toMatch(/^message:/);
    });
  });

  describe('team isolation', () => {
    it("makes another team's runs invisible (404, never 403)", async () => {
      const teams = app.ambient.app.get(TeamsService);
      const keys = app.ambient.app.get(ApiKeysService);
      const other = await teams.createTeam(`other-${Date.now()}`);
      const otherUser = await teams.createUser(other, { displayName: 'Eve', role: 'admin' });
      const { key } = await keys.create(otherUser, 'test');
      const otherApi = apiClient(app.baseUrl, key);

      const mine = (await api.post('/agent/runs', { prompt: 'private' })).body.run_id;
      for (const res of [
        await otherApi.get(`/agent/runs/${mine}`),
        await otherApi.post(`/agent/runs/${mine}/cancel`),
        await otherApi.post(`/agent/runs/${mine}/followups`, { message: 'hi' }),
        await otherApi.get(`/agent/runs/${mine}/timeline`),
        await otherApi.get(`/agent/runs?ancestor_run_id=${mine}`),
      ]) {
        expect(res.status).toBe(404);
      }
      expect((await otherApi.get('/agent/runs')).body.runs).toEqual([]);
      expect(await api.runState(mine)).toBe('QUEUED');
    });
  });

  describe('OpenAPI', () => {
    it('publishes the Oz paths, parameter names and schema fields', async () => {
      const res = await api.raw().get('/api/v1/openapi.json');
      expect(res.status).toBe(200);
      const doc = res.body;
      for (const path of [
        '/agent/runs',
        '/agent/run',
        '/agent/runs/{runId}',
        '/agent/runs/{runId}/cancel',
        '/agent/runs/{runId}/followups',
        '/agent/runs/{runId}/timeline',
        '/agent/run-by-external-reference',
        '/agent/models',
      ]) {
        expect(Object.keys(doc.paths)).toContain(path);
      }
      const listParams = doc.paths['/agent/runs'].get.parameters.map(
        (p: { name: string }) => p.name,
      );
      expect(listParams).toEqual(
        expect.arrayContaining([
          'limit',
          'cursor',
          'sort_by',
          'sort_order',
          'state',
          'source',
          'created_after',
          'environment_id',
          'skill_spec',
          'ancestor_run_id',
          'q',
        ]),
      );
      const runItem = doc.components.schemas.RunItem.properties;
      expect(Object.keys(runItem)).toEqual(
        expect.arrayContaining([
          'run_id',
          'task_id',
          'root_run_id',
          'state',
          'status_message',
          'request_usage',
          'finished_at',
        ]),
      );
      for (const schema of [
        'RunAgentRequest',
        'RunAgentResponse',
        'ListRunsResponse',
        'AmbientAgentConfig',
        'Error',
        'ListModelsResponse',
      ]) {
        expect(Object.keys(doc.components.schemas)).toContain(schema);
      }
      expect(
        doc.paths['/agent/runs/{runId}/cancel'].post.responses['409'].content[
          'application/problem+json'
        ],
      ).toBeDefined();
      const docs = await api.raw().get('/api/docs/');
      expect(docs.status).toBe(200);
    });
  });
});
