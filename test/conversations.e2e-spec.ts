import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { apiClient } from './support/api-client';
import { useTestApp } from './support/use-test-app';
import { waitFor } from './support/wait';

/** Conversations, raw transcripts and the signed URLs they are downloaded through. */
describe('conversations and transcripts (api + worker, fake model server)', () => {
  // Short-lived download URLs so expiry can be observed. A lease a live worker renews on a
  // busy machine: these runs must execute once (see conversations-under-load.e2e-spec.ts).
  const { model, env, app, api } = useTestApp('conversations', ['api', 'worker'], {
    'blobs.urlTtlSeconds': 5,
    'runs.leaseMs': 10_000,
  });

  const finished = (runId: string) =>
    waitFor(
      async () => (await api.get(`/agent/runs/${runId}`)).body,
      (run) => ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(run.state),
      { what: `run ${runId} to finish` },
    );

  /** Follows a 302 to Ambient's own download route (same server, whatever publicUrl says). */
  const download = (location: string) => {
    const url = new URL(location);
    return request(new URL(app.baseUrl).origin).get(`${url.pathname}${url.search}`);
  };

  let runId: string;
  let conversationId: string;

  beforeAll(async () => {
    model.script('conv', [
      {
        toolCalls: [{ name: 'run_command', arguments: { command: 'echo hello && exit 3' } }],
      },
      { toolCalls: [{ name: 'run_command', arguments: { command: 'echo fixed' } }] },
      { text: 'All done.' },
    ]);
    runId = (await api.post('/agent/runs', { prompt: 'Say hello [script:conv]' })).body.run_id;
    const run = await finished(runId);
    expect(run.state).toBe('SUCCEEDED');
    conversationId = run.conversation_id;
  });

  it('serves the normalized conversation of a run: text, actions and their results', async () => {
    const res = await api.get(`/agent/runs/${runId}/conversation`);
    expect(res.status).toBe(200);
    expect(res.body.conversation_id).toBe(conversationId);
    expect(res.body.steps).toHaveLength(1);
    const [step] = res.body.steps;
    expect(step).toMatchObject({ id: `${runId}:1`, summary: 'All done.', steps: [] });
    // The execution's timeline events come as system messages with one `event` block each.
    type Message = { role: string; content: { type: string; name?: string }[] };
    const events = step.messages.filter((m: Message) => m.role === 'system');
    expect(events.map((m: Message) => m.content[0].name)).toEqual(
      expect.arrayContaining(['oz_run_claimed', 'agent_started', 'oz_run_done']),
    );
    expect(events.every((m: Message) => m.content[0].type === 'event')).toBe(true);
    step.messages = step.messages.filter((m: Message) => m.role !== 'system');
    const roles = step.messages.map((m: Message) => m.role);
    expect(roles).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool', 'assistant']);
    expect(step.messages[0].content[0]).toMatchObject({ type: 'text' });
    expect(step.messages[0].content[0].text).toContain('Say hello');

    const action = step.messages[1].content.find((b: { type: string }) => b.type === 'action');
    expect(action).toMatchObject({
      category: 'command',
      name: 'run_command',
      input: { command: 'echo hello && exit 3' },
    });
    const failed = step.messages[2].content[0];
    expect(failed).toMatchObject({
      type: 'action_result',
      action_id: action.id,
      category: 'command',
      name: 'run_command',
      state: 'failed',
      output: { exit_code: 3 },
    });
    expect(failed.output.output).toContain('hello');
    expect(step.messages[4].content[0]).toMatchObject({ state: 'completed' });
    expect(step.messages[5].content).toEqual([
      expect.objectContaining({ type: 'text', text: 'All done.' }),
    ]);
    for (const message of step.messages) {
      expect(message.message_ids).toHaveLength(1);
      expect(Date.parse(message.timestamp)).not.toBeNaN();
    }
  });

  it('serves the same steps by conversation id and 404s for unknown ones', async () => {
    const byRun = await api.get(`/agent/runs/${runId}/conversation`);
    const byConversation = await api.get(`/agent/conversations/${conversationId}`);
    expect(byConversation.status).toBe(200);
    expect(byConversation.body).toEqual(byRun.body);

    const unknown = await api.get('/agent/conversations/no-such-conversation');
    expect(unknown.status).toBe(404);
    expect(unknown.body.type).toContain('resource-not-found');
    expect((await api.get('/agent/runs/no-such-run/transcript')).status).toBe(404);
  });

  it('redirects to a signed transcript URL that serves the raw JSONL', async () => {
    for (const path of [
      `/agent/runs/${runId}/transcript`,
      `/agent/conversations/${conversationId}/transcript`,
    ]) {
      const res = await api.get(path).redirects(0);
      expect(res.status).toBe(302);
      expect(res.headers.location).toMatch(/\/api\/v1\/blobs\/transcripts\/.+signature=/);
      const file = await download(res.headers.location);
      expect(file.status).toBe(200);
      expect(file.headers['content-type']).toContain('application/x-ndjson');
      const lines = String(file.text ?? file.body)
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(lines).toHaveLength(6);
      expect(lines[0]).toMatchObject({ run_id: runId, execution_id: 1, message: { role: 'user' } });
      expect(lines[5].message).toEqual({
        role: 'assistant',
        content: 'All done.',
        request_id: expect.stringMatching(/^chatcmpl-fake-/),
      });
    }
  });

  it('serves what a run in progress has recorded so far, and the whole transcript once it ends', async () => {
    model.script('live', [
      {
        toolCalls: [
          {
            name: 'run_command',
            arguments: { command: 'while [ ! -f go ]; do sleep 0.05; done; echo went' },
          },
        ],
      },
      { text: 'Finished.' },
    ]);
    const live = (await api.post('/agent/runs', { prompt: 'Wait for go [script:live]' })).body
      .run_id as string;
    const lines = (text: string) =>
      text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).message as { role: string; content?: unknown });
    const sofar = await waitFor(
      () => api.transcriptText(live).catch(() => ''),
      (text) => text.includes('tool_calls'),
      { what: 'the running tool call in the transcript' },
    );
    expect(lines(sofar).map((m) => m.role)).toEqual(['user', 'assistant']);
    expect((await api.get(`/agent/runs/${live}`)).body.state).toBe('INPROGRESS');

    writeFileSync(join(env.workspaceRoot, live, 'go'), '');
    expect((await finished(live)).state).toBe('SUCCEEDED');
    const final = lines(await api.transcriptText(live));
    expect(final.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(final.at(-1)?.content).toBe('Finished.');
  });

  it('stores no transcript when a run ends, and renders both whole when asked, a follow-up included', async () => {
    model.script('twice', [{ text: 'First answer.' }, { text: 'Second answer.' }]);
    const created = await api.post('/agent/runs', { prompt: 'Answer twice [script:twice]' });
    const once = created.body.run_id as string;
    const conversation = (await finished(once)).conversation_id as string;
    const transcripts = join(env.workspaceRoot, '.blobs', 'transcripts');
    const stored = () => (existsSync(transcripts) ? readdirSync(transcripts) : []);
    const lines = async (path: string) => {
      const res = await api.get(path).redirects(0);
      expect(res.status).toBe(302);
      return String((await download(res.headers.location)).text)
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { execution_id: number; message: { content?: unknown } });
    };
    expect(stored().filter((name) => name.includes(once))).toEqual([]);
    const first = await lines(`/agent/conversations/${conversation}/transcript`);
    expect(first.map((l) => l.execution_id)).toEqual([1, 1]);
    expect(first[1].message.content).toBe('First answer.');

    expect((await api.post(`/agent/runs/${once}/followups`, { message: 'Again.' })).status).toBe(
      200,
    );
    await waitFor(
      async () => (await api.get(`/agent/runs/${once}`)).body,
      (run) => run.state === 'SUCCEEDED' && run.status_message?.message === 'Second answer.',
      { what: 'the follow-up execution to end' },
    );
    for (const path of [
      `/agent/runs/${once}/transcript`,
      `/agent/conversations/${conversation}/transcript`,
    ]) {
      const both = await lines(path);
      expect(both.map((l) => l.execution_id)).toEqual([1, 1, 2, 2]);
      expect(both.at(-1)?.message.content).toBe('Second answer.');
    }
  });

  it('refuses an altered or expired download URL with 403 in the Error model', async () => {
    const { location } = (await api.get(`/agent/runs/${runId}/transcript`).redirects(0)).headers;
    const url = new URL(location);

    const otherKey = new URL(url);
    otherKey.pathname = otherKey.pathname.replace(`run-${runId}`, 'run-other');
    const longer = new URL(url);
    longer.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 3600));
    const forged = new URL(url);
    forged.searchParams.set('signature', 'f'.repeat(64));
    for (const altered of [otherKey, longer, forged]) {
      const res = await download(altered.toString());
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ status: 403 });
      expect(res.body.type).toContain('not-authorized');
    }

    expect((await download(location)).status).toBe(200);
    const expired = await waitFor(
      () => download(location),
      (res) => res.status !== 200,
      { what: 'the download URL to expire', timeoutMs: 20_000, intervalMs: 250 },
    );
    expect(expired.status).toBe(403);
    expect(expired.body.detail).toContain('expired');
  });

  it('documents the conversation, transcript, artifact and score endpoints in the OpenAPI', async () => {
    const res = await request(new URL(app.baseUrl).origin).get('/api/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.paths)).toEqual(
      expect.arrayContaining([
        '/agent/runs/{runId}/conversation',
        '/agent/runs/{runId}/transcript',
        '/agent/conversations/{conversation_id}',
        '/agent/conversations/{conversation_id}/transcript',
        '/agent/artifacts/{artifactUid}',
        '/agent/artifacts/{artifactUid}/download',
        '/harness-support/artifacts',
        '/agent/runs/{runId}/scores',
        '/agent/runs/{runId}/judges',
      ]),
    );
    expect(res.body.components.schemas).toHaveProperty('ConversationStep');
    expect(Object.keys(res.body.paths).some((p) => p.startsWith('/blobs'))).toBe(false);
  });

  it("hides another team's conversation and transcript (404)", async () => {
    const { TeamsService } = await import('../src/modules/teams/teams.service');
    const { ApiKeysService } = await import('../src/modules/teams/api-keys.service');
    const teams = app.ambient.app.get(TeamsService);
    const other = await teams.createTeam(`conv-other-${Date.now()}`);
    const user = await teams.createUser(other, { displayName: 'Eve', role: 'admin' });
    const { key } = await app.ambient.app.get(ApiKeysService).create(user, 'test');
    const eve = apiClient(app.baseUrl, key);
    for (const path of [
      `/agent/runs/${runId}/conversation`,
      `/agent/runs/${runId}/transcript`,
      `/agent/conversations/${conversationId}`,
      `/agent/conversations/${conversationId}/transcript`,
    ]) {
      expect((await eve.get(path).redirects(0)).status).toBe(404);
    }
  });
});
