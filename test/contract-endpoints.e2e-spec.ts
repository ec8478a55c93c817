import request from 'supertest';
import { apiClient } from './support/api-client';
import { useTestApp } from './support/use-test-app';
import { waitFor } from './support/wait';

const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
const PUBLIC_URL = 'https://ambient.example.com';

/**
 * Issue 12 items 4–5: the redirect and handoff-attachment endpoints, and the Oz fields that are
 * now sent (trace_id, session_id/session_link, request_id).
 */
describe('contract endpoints and fields (api + worker, fake model server)', () => {
  let eve: ReturnType<typeof apiClient>;
  let anonymous: ReturnType<typeof request>;

  const { model, app, api } = useTestApp('contract_endpoints', ['api', 'worker'], {
    'server.publicUrl': PUBLIC_URL,
  });

  beforeAll(async () => {
    const { TeamsService } = await import('../src/modules/teams/teams.service');
    const { ApiKeysService } = await import('../src/modules/teams/api-keys.service');
    const teams = app.ambient.app.get(TeamsService);
    const other = await teams.createTeam(`contract-other-${Date.now()}`);
    const user = await teams.createUser(other, { displayName: 'Eve', role: 'admin' });
    const { key } = await app.ambient.app.get(ApiKeysService).create(user, 'test');
    eve = apiClient(app.baseUrl, key);
    anonymous = request(new URL(app.baseUrl).origin);
  });

  const finished = (runId: string) =>
    waitFor(
      async () => (await api.get(`/agent/runs/${runId}`)).body,
      (run) => ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(run.state),
      { what: `run ${runId} to finish` },
    );
  const anon = (path: string) => anonymous.get(`${api.prefix}${path}`);

  describe('Error.trace_id and X-Request-Id', () => {
    it('gives every answer an id and puts it in every Error body', async () => {
      const ok = await api.get('/agent/runs?limit=1');
      expect(ok.status).toBe(200);
      expect(ok.headers['x-request-id']).toMatch(/^[0-9a-f]{32}$/);

      for (const res of [
        await api.get('/agent/runs/00000000-0000-4000-8000-000000000000'), // 404
        await api.get('/agent/runs?limit=0'), // 400
        await anon('/agent/runs'), // 401
        await api.get('/no/such/route'), // unknown route
        await api.post('/agent/runs').set('Content-Type', 'application/json').send('{"bad'),
      ]) {
        expect(res.status).toBeGreaterThanOrEqual(400);
        expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
        expect(res.body.trace_id).toMatch(/^[0-9a-f]{32}$/);
        expect(res.headers['x-request-id']).toBe(res.body.trace_id);
      }
      const a = await api.get('/agent/runs/nope');
      const b = await api.get('/agent/runs/nope');
      expect(a.body.trace_id).not.toBe(b.body.trace_id);
    });

    it("keeps the caller's X-Request-Id, else a traceparent's trace id; refuses neither", async () => {
      const own = await api.get('/agent/runs/nope').set('X-Request-Id', 'req-42.abc');
      expect(own.status).toBe(404);
      expect(own.headers['x-request-id']).toBe('req-42.abc');
      expect(own.body.trace_id).toBe('req-42.abc');

      const trace = '4bf92f3577b34da6a3ce929d0e0e4736';
      const parent = await api
        .get('/agent/runs/nope')
        .set('traceparent', `00-${trace}-00f067aa0ba902b7-01`);
      expect(parent.body.trace_id).toBe(trace);

      const junk = await api.get('/agent/runs/nope').set('X-Request-Id', 'has spaces and "quotes"');
      expect(junk.status).toBe(404);
      expect(junk.body.trace_id).toMatch(/^[0-9a-f]{32}$/);
    });
  });

  describe('GET /agent/runs/{id}/handoff/attachments', () => {
    beforeAll(() => model.script('contract-quick', [{ text: 'ok' }]));

    it("lists the run's attachments with signed URLs that serve their bytes", async () => {
      const text = 'hello attachment\n';
      const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]);
      const created = await api.post('/agent/runs', {
        prompt: 'with files [script:contract-quick]',
        attachments: [
          {
            file_name: 'notes.txt',
            mime_type: 'text/plain',
            data: Buffer.from(text).toString('base64'),
          },
          { file_name: 'pic.png', mime_type: 'image/png', data: png.toString('base64') },
        ],
      });
      expect(created.status).toBe(200);
      const runId = created.body.run_id;

      const res = await api.get(`/agent/runs/${runId}/handoff/attachments`);
      expect(res.status).toBe(200);
      expect(res.body.attachments).toHaveLength(2);
      const [notes, pic] = res.body.attachments;
      expect(notes).toEqual({
        attachment_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        download_url: expect.stringMatching(
          new RegExp(`^${PUBLIC_URL}/api/v1/run-attachments/${notes.attachment_id}\\?`),
        ),
        filename: 'notes.txt',
        mime_type: 'text/plain',
      });
      expect(pic).toMatchObject({ filename: 'pic.png', mime_type: 'image/png' });

      const got = await api.download(notes.download_url);
      expect(got.status).toBe(200);
      expect(got.body).toBe(text);
      expect(got.headers['content-type']).toMatch(/^text\/plain/);
      expect(got.headers['content-disposition']).toBe('attachment; filename="notes.txt"');
      expect(got.headers['x-content-type-options']).toBe('nosniff');
      const bytes = await anonymous
        .get(new URL(pic.download_url).pathname + new URL(pic.download_url).search)
        .buffer(true)
        .parse((r, done) => {
          const chunks: Buffer[] = [];
          r.on('data', (c: Buffer) => chunks.push(c));
          r.on('end', () => done(null, Buffer.concat(chunks)));
        });
      expect(Buffer.compare(bytes.body as Buffer, png)).toBe(0);

      // The signature covers the attachment, its type and name: another one, or a changed
      // name, is refused in the Error model.
      const forged = notes.download_url.replace(notes.attachment_id, pic.attachment_id);
      const refused = await api.download(forged);
      expect(refused.status).toBe(403);
      expect(refused.headers['content-type']).toMatch(/application\/problem\+json/);
      expect((await api.download(notes.download_url.replace('notes.txt', 'x.txt'))).status).toBe(
        403,
      );
      expect((await api.download(`${PUBLIC_URL}/api/v1/run-attachments/x`)).status).toBe(403);
    });

    it('answers an empty list for a run without attachments; 404 for unknown and foreign runs', async () => {
      const runId = (await api.post('/agent/runs', { prompt: 'no files [script:contract-quick]' }))
        .body.run_id;
      expect((await api.get(`/agent/runs/${runId}/handoff/attachments`)).body).toEqual({
        attachments: [],
      });
      const unknown = await api.get(
        '/agent/runs/00000000-0000-4000-8000-000000000000/handoff/attachments',
      );
      expect(unknown.status).toBe(404);
      expect(unknown.headers['content-type']).toMatch(/application\/problem\+json/);
      expect((await eve.get(`/agent/runs/${runId}/handoff/attachments`)).status).toBe(404);
      expect((await anon(`/agent/runs/${runId}/handoff/attachments`)).status).toBe(401);
    });
  });

  describe('session and conversation redirects, session fields, request_id', () => {
    let runId: string;
    let conversationId: string;

    beforeAll(async () => {
      model.script('contract-done', [
        { toolCalls: [{ name: 'run_command', arguments: { command: 'echo hi' } }] },
        { text: 'Done.' },
      ]);
      runId = (await api.post('/agent/runs', { prompt: 'go [script:contract-done]' })).body.run_id;
      const run = await finished(runId);
      expect(run.state).toBe('SUCCEEDED');
      conversationId = run.conversation_id;
    });

    it('sends session_id (the run id) and session_link (the run page) once the run executed', async () => {
      const run = (await api.get(`/agent/runs/${runId}`)).body;
      expect(run.session_id).toBe(runId);
      expect(run.session_link).toBe(`${PUBLIC_URL}/console/runs/${runId}`);
    });

    it('session redirect: the conversation of an ended run, as JSON to the SDK (with or without a key)', async () => {
      for (const res of [
        await api.get(`/agent/sessions/${runId}/redirect`).set('Accept', 'application/json'),
        await api.get(`/agent/sessions/${runId}/redirect`).set('Accept', '*/*'),
        await anon(`/agent/sessions/${runId}/redirect`),
        await anon(`/agent/sessions/${runId}/redirect`).set('Accept', 'application/json'),
      ]) {
        expect(res.status).toBe(200);
        expect(res.headers['content-type']).toMatch(/^application\/json/);
        expect(res.headers.vary).toMatch(/Accept/);
        expect(res.body).toEqual({ conversation_id: conversationId });
      }
    });

    it('a browser gets 302 to the run page instead', async () => {
      for (const path of [
        `/agent/sessions/${runId}/redirect`,
        `/agent/conversations/${conversationId}/redirect`,
      ]) {
        const res = await anon(path).set('Accept', BROWSER_ACCEPT).redirects(0);
        expect(res.status).toBe(302);
        expect(res.headers.location).toBe(`${PUBLIC_URL}/console/runs/${runId}`);
        expect(res.headers.vary).toMatch(/Accept/);
      }
    });

    it('conversation redirect: {} once nothing is executing; session_id while its latest run runs', async () => {
      const ended = await api.get(`/agent/conversations/${conversationId}/redirect`);
      expect(ended.status).toBe(200);
      expect(ended.body).toEqual({});

      model.script('contract-hang', [{ hang: true }]);
      const live = (await api.post('/agent/runs', { prompt: 'wait [script:contract-hang]' })).body
        .run_id;
      const running = await waitFor(
        async () => (await api.get(`/agent/runs/${live}`)).body,
        (run) => run.state === 'INPROGRESS',
        { what: 'the run to start' },
      );
      const convo = await anon(`/agent/conversations/${running.conversation_id}/redirect`);
      expect(convo.body).toEqual({ session_id: live });
      // The session of a running run has nowhere to go yet.
      expect((await api.get(`/agent/sessions/${live}/redirect`)).body).toEqual({});
      expect((await api.post(`/agent/runs/${live}/cancel`)).status).toBe(200);
    });

    it("unknown ids and other teams' ids are 404 in the Error model; a bad key is 401", async () => {
      const unknown = '00000000-0000-4000-8000-000000000000';
      for (const res of [
        await anon(`/agent/sessions/${unknown}/redirect`),
        await anon(`/agent/conversations/${unknown}/redirect`),
        await api.get(`/agent/sessions/not-a-uuid/redirect`),
        await eve.get(`/agent/sessions/${runId}/redirect`),
        await eve.get(`/agent/conversations/${conversationId}/redirect`),
        await eve
          .get(`/agent/sessions/${runId}/redirect`)
          .set('Accept', BROWSER_ACCEPT)
          .redirects(0),
      ]) {
        expect(res.status).toBe(404);
        expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      }
      const bad = await anon(`/agent/sessions/${runId}/redirect`).set(
        'Authorization',
        'Bearer nope',
      );
      expect(bad.status).toBe(401);
    });

    it("ConversationMessage.request_id: the model response's id on its turn and its tool results", async () => {
      const res = await api.get(`/agent/runs/${runId}/conversation`);
      type Message = { role: string; request_id?: string };
      const messages: Message[] = res.body.steps[0].messages.filter(
        (m: Message) => m.role !== 'system',
      );
      expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
      const [user, call, result, answer] = messages;
      expect(user).not.toHaveProperty('request_id');
      expect(call.request_id).toMatch(/^chatcmpl-fake-/);
      expect(result.request_id).toBe(call.request_id);
      expect(answer.request_id).toMatch(/^chatcmpl-fake-/);
      expect(answer.request_id).not.toBe(call.request_id);
    });
  });

  describe('fields now sent: ScheduledAgentItem.environment, RunItem.trigger_url', () => {
    it('resolves agent_config.environment_id of a schedule to the environment config', async () => {
      const env1 = await api.post('/agent/environments', {
        name: 'sched-env',
        description: 'for schedules',
        github_repos: [{ owner: 'acme', repo: 'web' }],
        setup_commands: ['echo ready'],
        network: 'none',
      });
      expect(env1.status).toBeLessThan(300);
      const uid = env1.body.uid;
      const withEnv = await api.post('/agent/schedules', {
        name: 'with-env',
        cron_schedule: '0 9 * * *',
        prompt: 'daily',
        agent_config: { environment_id: uid },
      });
      expect(withEnv.status).toBe(201);
      const expected = {
        name: 'sched-env',
        description: 'for schedules',
        github_repos: [{ owner: 'acme', repo: 'web' }],
        setup_commands: ['echo ready'],
        network: 'none',
      };
      expect(withEnv.body.environment).toMatchObject(expected);
      expect((await api.get(`/agent/schedules/${withEnv.body.id}`)).body.environment).toMatchObject(
        expected,
      );
      const listed = (await api.get('/agent/schedules')).body.schedules;
      expect(
        listed.find((s: { id: string }) => s.id === withEnv.body.id).environment,
      ).toMatchObject(expected);

      const without = await api.post('/agent/schedules', {
        name: 'without-env',
        cron_schedule: '0 9 * * *',
        prompt: 'daily',
      });
      expect(without.body).not.toHaveProperty('environment');
    });

    it('links a child run to its parent; a run started directly has no trigger_url', async () => {
      model.script('contract-child', [{ text: 'ok' }]);
      const parent = (await api.post('/agent/runs', { prompt: 'parent [script:contract-child]' }))
        .body.run_id;
      const child = (
        await api.post('/agent/runs', {
          prompt: 'child [script:contract-child]',
          parent_run_id: parent,
        })
      ).body.run_id;
      const item = (await api.get(`/agent/runs/${child}`)).body;
      expect(item.source).toBe('ORCHESTRATION');
      expect(item.trigger_url).toBe(`${PUBLIC_URL}/api/v1/agent/runs/${parent}`);
      expect((await api.get(`/agent/runs/${parent}`)).body).not.toHaveProperty('trigger_url');
    });
  });
});
