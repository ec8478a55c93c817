import request from 'supertest';
import { ApiKeysService } from '../src/modules/teams/api-keys.service';
import { TeamsService } from '../src/modules/teams/teams.service';
import { apiClient } from './support/api-client';
import { useTestApp } from './support/use-test-app';
import { waitFor } from './support/wait';

const PR_URL = 'https://github.com/acme/web/pull/7';

/** Artifacts reported by the built-in harness's report_artifact tool, read back over the API. */
describe('artifacts (report_artifact tool, blob downloads, visibility)', () => {
  let eve: ReturnType<typeof apiClient>;
  let run: {
    run_id: string;
    state: string;
    artifacts: { artifact_type: string; data: Record<string, unknown> }[];
  };

  const anonymous = () => request(new URL(app.baseUrl).origin);
  const path = (p: string) => `${api.prefix}${p}`;
  const download = (location: string) => {
    const url = new URL(location);
    return anonymous().get(`${url.pathname}${url.search}`);
  };
  const uidOf = (type: string) =>
    String(run.artifacts.find((a) => a.artifact_type === type)!.data.artifact_uid);

  const { model, app, api } = useTestApp('artifacts', ['api', 'worker']);

  beforeAll(async () => {
    const teams = app.ambient.app.get(TeamsService);
    const other = await teams.createTeam(`artifacts-other-${Date.now()}`);
    const user = await teams.createUser(other, { displayName: 'Eve', role: 'admin' });
    eve = apiClient(app.baseUrl, (await app.ambient.app.get(ApiKeysService).create(user, 't')).key);

    const report = (body: string, route = 'artifacts') =>
      `curl -sS -X POST "$AMBIENT_API_URL/harness-support/${route}" ` +
      `-H "Authorization: Bearer $AMBIENT_RUN_KEY" -H "Content-Type: application/json" ` +
      `-d "${body}" -w '\\nHTTP %{http_code}'`;
    model.script('artifacts', [
      {
        toolCalls: [
          {
            name: 'run_command',
            arguments: {
              command: report(
                '{\\"artifact_type\\":\\"SCREENSHOT\\",\\"mime_type\\":\\"image/png\\",' +
                  '\\"content_base64\\":\\"$(printf fakepng | base64)\\"}',
              ),
            },
          },
          {
            name: 'run_command',
            arguments: {
              command: report(
                '{\\"artifact_type\\":\\"SCREENSHOT\\",\\"mime_type\\":\\"text/plain\\"}',
              ),
            },
          },
          {
            name: 'run_command',
            arguments: { command: 'printf "line 1\\nline 2\\n" > report.txt' },
          },
          // Oz's ReportArtifactRequest, at the path the Warp client uses.
          {
            name: 'run_command',
            arguments: {
              command: report(
                `{\\"artifact_type\\":\\"PULL_REQUEST\\",\\"data\\":{\\"url\\":\\"${PR_URL}\\",` +
                  '\\"branch\\":\\"fix-flaky\\"}}',
                'report-artifact',
              ),
            },
          },
          {
            name: 'run_command',
            arguments: {
              command: report(
                '{\\"artifact_type\\":\\"PULL_REQUEST\\",\\"data\\":{\\"branch\\":\\"b\\"}}',
                'report-artifact',
              ),
            },
          },
        ],
      },
      {
        toolCalls: [
          {
            name: 'report_artifact',
            arguments: {
              artifact_type: 'FILE',
              path: 'report.txt',
              mime_type: 'text/plain',
              description: 'The report',
              is_public: true,
            },
          },
          {
            name: 'report_artifact',
            arguments: { artifact_type: 'PLAN', title: 'Plan', content: '# Plan\n\n1. Do it' },
          },
          {
            name: 'report_artifact',
            arguments: {
              artifact_type: 'EXTERNAL_REFERENCE',
              reference_type: 'linear_issue',
              url: 'https://linear.app/acme/issue/ENG-42',
              title: 'ENG-42',
            },
          },
          {
            name: 'report_artifact',
            arguments: { artifact_type: 'FILE', path: '../../etc/passwd' },
          },
          { name: 'report_artifact', arguments: { artifact_type: 'PULL_REQUEST', url: 'nope' } },
        ],
      },
      { text: 'Reported.' },
    ]);
    const runId = (await api.post('/agent/runs', { prompt: 'Report [script:artifacts]' })).body
      .run_id;
    run = await waitFor(
      async () => (await api.get(`/agent/runs/${runId}`)).body,
      (r) => ['SUCCEEDED', 'FAILED', 'ERROR'].includes(r.state),
      { what: 'the run to finish' },
    );
  });

  it('lists the reported artifacts on the run and tells the model about invalid reports', () => {
    expect(run.state).toBe('SUCCEEDED');
    expect(run.artifacts.map((a) => a.artifact_type)).toEqual([
      'SCREENSHOT',
      'PULL_REQUEST',
      'FILE',
      'PLAN',
      'EXTERNAL_REFERENCE',
    ]);
    expect(run.artifacts[1].data).toMatchObject({ url: PR_URL, branch: 'fix-flaky' });
    expect(run.artifacts[2].data).toEqual({
      artifact_uid: expect.stringMatching(/^[A-Za-z0-9]{22}$/),
      filename: 'report.txt',
      filepath: 'report.txt',
      mime_type: 'text/plain',
      size_bytes: 14,
      description: 'The report',
    });
    const toolResults = model.requests
      .filter((r) => r.script === 'artifacts')
      .at(-1)!
      .body.messages.filter((m) => m.role === 'tool')
      .map((m) => String(m.content));
    expect(toolResults.at(-2)).toContain('is not a file in the workspace');
    // Over HTTP with the execution's run-scoped key: a valid report, then an invalid one.
    expect(JSON.parse(toolResults[0]).output).toMatch(/"artifact_type":"SCREENSHOT"[^]*HTTP 200$/);
    const refused = JSON.parse(toolResults[1]).output as string;
    expect(refused).toMatch(/HTTP 400$/);
    expect(refused).toContain('mime_type: must be an image type');
    const ozShape = JSON.parse(toolResults[3]).output as string;
    expect(ozShape).toMatch(/^\{"artifact_uid":"[A-Za-z0-9]{22}"[^]*HTTP 200$/);
    const ozRefused = JSON.parse(toolResults[4]).output as string;
    expect(ozRefused).toMatch(/HTTP 400$/);
    expect(ozRefused).toContain('data.url: is required');
    expect(toolResults.at(-1)).toContain('url: must be an http(s) URL');
  });

  it('serves a FILE with a signed download URL, and /download redirects to it', async () => {
    const uid = uidOf('FILE');
    const res = await api.get(`/agent/artifacts/${uid}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      artifact_uid: uid,
      artifact_type: 'FILE',
      created_at: expect.any(String),
      data: {
        download_url: expect.stringContaining(`/api/v1/blobs/artifacts/${uid}?`),
        expires_at: expect.any(String),
        content_type: 'text/plain',
        filename: 'report.txt',
        filepath: 'report.txt',
        size_bytes: 14,
        description: 'The report',
      },
    });
    expect(Date.parse(res.body.data.expires_at)).toBeGreaterThan(Date.now());
    const file = await download(res.body.data.download_url);
    expect(file.status).toBe(200);
    expect(file.headers['content-disposition']).toContain('report.txt');
    expect(file.headers['x-content-type-options']).toBe('nosniff');
    expect(file.text).toBe('line 1\nline 2\n');

    const redirect = await api.get(`/agent/artifacts/${uid}/download`).redirects(0);
    expect(redirect.status).toBe(302);
    expect((await download(redirect.headers.location)).text).toBe('line 1\nline 2\n');
  });

  it('serves a SCREENSHOT reported over HTTP', async () => {
    const uid = uidOf('SCREENSHOT');
    const res = await api.get(`/agent/artifacts/${uid}`);
    expect(res.body).toMatchObject({
      artifact_type: 'SCREENSHOT',
      data: { content_type: 'image/png', download_url: expect.any(String) },
    });
    const file = await download(res.body.data.download_url);
    expect(file.headers['content-type']).toBe('image/png');
    expect(Buffer.from(file.body as Buffer).toString()).toBe('fakepng');
  });

  it('redirects to a screenshot through its conversation, for the owning team only', async () => {
    const uid = uidOf('SCREENSHOT');
    const conversationId = (await api.get(`/agent/runs/${run.run_id}`)).body.conversation_id;
    const path = `/agent/conversations/${conversationId}/screenshots/${uid}/download`;
    const res = await api.get(path).redirects(0);
    expect(res.status).toBe(302);
    expect((await download(res.headers.location)).headers['content-type']).toBe('image/png');
    expect((await eve.get(path).redirects(0)).status).toBe(404);
    const other = `/agent/conversations/another/screenshots/${uid}/download`;
    expect((await api.get(other).redirects(0)).status).toBe(404);
  });

  it('serves a PLAN with its content inline', async () => {
    const uid = uidOf('PLAN');
    const res = await api.get(`/agent/artifacts/${uid}`);
    expect(res.body).toMatchObject({
      artifact_type: 'PLAN',
      data: { content: '# Plan\n\n1. Do it', content_type: 'text/markdown', title: 'Plan' },
    });
  });

  it('lets anyone read a public artifact without a key, without its file path', async () => {
    const uid = uidOf('FILE');
    const res = await anonymous().get(path(`/agent/artifacts/${uid}`));
    expect(res.status).toBe(200);
    expect(res.body.data.filename).toBe('report.txt');
    expect(res.body.data).not.toHaveProperty('filepath');
    expect((await download(res.body.data.download_url)).status).toBe(200);
    expect((await eve.get(`/agent/artifacts/${uid}`)).status).toBe(200);
  });

  it('hides a private artifact from other teams and anonymous readers (404)', async () => {
    const uid = uidOf('PLAN');
    for (const res of [
      await anonymous().get(path(`/agent/artifacts/${uid}`)),
      await anonymous().get(path(`/agent/artifacts/${uid}/download`)),
      await eve.get(`/agent/artifacts/${uid}`),
      await eve.get(`/agent/artifacts/${uid}/download`),
      await api.get('/agent/artifacts/AAAAAAAAAAAAAAAAAAAAAA'),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body.type).toContain('resource-not-found');
    }
    const badKey = await anonymous()
      .get(path(`/agent/artifacts/${uidOf('FILE')}`))
      .set('Authorization', 'Bearer amb_not_a_real_key');
    expect(badKey.status).toBe(401);
  });

  it('finds the run by the URL it reported', async () => {
    const url = encodeURIComponent('https://linear.app/acme/issue/ENG-42');
    const res = await api.get(`/agent/run-by-external-reference?url=${url}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ run_id: run.run_id });
    expect((await eve.get(`/agent/run-by-external-reference?url=${url}`)).status).toBe(404);
    const byPr = await api.get(
      `/agent/run-by-external-reference?url=${encodeURIComponent(PR_URL)}`,
    );
    expect(byPr.body).toEqual({ run_id: run.run_id });
  });
});
