import { readdirSync, readlinkSync } from 'node:fs';
import { get } from 'node:http';
import { join } from 'node:path';
import { BLOB_STORE, BlobStore } from '../../src/modules/blobs/blob-store';
import { ApiKeysService } from '../../src/modules/teams/api-keys.service';
import { TeamsService } from '../../src/modules/teams/teams.service';
import { FakeModelServer, startFakeModelServer } from '../fixtures/fake-model-server';
import { apiClient } from '../support/api-client';
import { createTestEnvironment, startTestApp, TestApp, TestEnvironment } from '../support/test-app';
import { waitFor } from '../support/wait';

const REPORT = '报告.txt';
const REPORT_DISPOSITION = `attachment; filename="__.txt"; filename*=UTF-8''%E6%8A%A5%E5%91%8A.txt`;
const BIG_BYTES = 16 * 1024 * 1024;

/**
 * Issue 19, class 10: downloads and logs. A non-ASCII file name broke its download (500, an
 * invalid Content-Disposition) and left the file open; a run attachment's signature opened a
 * blob of the same name; the environment share token was written in full in the request log.
 */
describe('security: downloads, their signatures and what the log keeps', () => {
  let model: FakeModelServer;
  let env: TestEnvironment;
  let app: TestApp;
  let api: ReturnType<typeof apiClient>;
  const logLines: string[] = [];

  beforeAll(async () => {
    model = await startFakeModelServer();
    env = createTestEnvironment('sec-downloads', model.url);
    app = await startTestApp(
      env,
      ['api', 'worker'],
      { 'log.level': 'info' },
      { logDestination: { write: (line: string) => void logLines.push(line) } },
    );
    api = apiClient(app.baseUrl, app.apiKey);
  });

  afterAll(async () => {
    await app?.close();
    await env?.destroy();
    await model?.close();
  });

  /** The files under the blob root this process holds open (the app runs in-process). */
  const openBlobFiles = async (): Promise<string[]> => {
    const root = join(env.workspaceRoot, '.blobs');
    return readdirSync('/proc/self/fd')
      .map((fd) => {
        try {
          return readlinkSync(`/proc/self/fd/${fd}`);
        } catch {
          return ''; // closed meanwhile
        }
      })
      .filter((target) => target.startsWith(root) && !target.endsWith('.tmp'));
  };
  const noBlobFileOpen = (what: string) =>
    waitFor(openBlobFiles, (open) => open.length === 0, { timeoutMs: 10_000, what });

  /** Runs a script that writes files and reports each as a FILE artifact; their download URLs. */
  const fileArtifacts = async (script: string, files: Record<string, string>) => {
    model.script(script, [
      {
        toolCalls: Object.entries(files).map(([name, command]) => ({
          name: 'run_command',
          arguments: { command: `${command} > '${name}'` },
        })),
      },
      {
        toolCalls: Object.keys(files).map((name) => ({
          name: 'report_artifact',
          arguments: { artifact_type: 'FILE', path: name, mime_type: 'text/plain' },
        })),
      },
      { text: 'Reported.' },
    ]);
    const created = await api.post('/agent/runs', { prompt: `Files [script:${script}]` });
    expect(created.status).toBe(200);
    const runId = created.body.run_id as string;
    await waitFor(
      () => api.runState(runId),
      (state) => state === 'SUCCEEDED' || state === 'FAILED' || state === 'ERROR',
      { what: `run ${runId} to end`, timeoutMs: 60_000 },
    );
    const run = (await api.get(`/agent/runs/${runId}`)).body as {
      state: string;
      artifacts: { artifact_type: string; data: { artifact_uid: string } }[];
    };
    expect(run.state).toBe('SUCCEEDED');
    const urls: Record<string, string> = {};
    for (const artifact of run.artifacts.filter((a) => a.artifact_type === 'FILE')) {
      const { body } = await api.get(`/agent/artifacts/${artifact.data.artifact_uid}`);
      urls[body.data.filename as string] = body.data.download_url as string;
    }
    return urls;
  };

  it('downloads an artifact named 报告.txt with an RFC 6266 filename*, and closes its file on every path', async () => {
    const urls = await fileArtifacts('unicode-artifact', {
      [REPORT]: 'printf "数据\\n"',
      'big.txt': `head -c ${BIG_BYTES} /dev/zero`,
    });
    const file = await api.download(urls[REPORT]);
    expect(file.status).toBe(200);
    expect(file.headers['content-disposition']).toBe(REPORT_DISPOSITION);
    expect(file.body).toBe('数据\n');
    await noBlobFileOpen('the downloaded file to be closed');

    // A client that leaves mid-download: the file is closed all the same.
    const url = new URL(urls['big.txt']);
    await new Promise<void>((resolve, reject) => {
      const req = get(`${app.baseUrl.replace(/\/api\/v1$/, '')}${url.pathname}${url.search}`);
      req.on('response', (res) => {
        expect(res.statusCode).toBe(200);
        expect(res.headers['content-length']).toBe(String(BIG_BYTES));
        req.destroy();
        resolve();
      });
      req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
    });
    await noBlobFileOpen('the file of the aborted download to be closed');
  });

  it('serves a run attachment with a non-ASCII name the same way', async () => {
    model.script('sec-quick', [{ text: 'ok' }]);
    const created = await api.post('/agent/runs', {
      prompt: 'With a file [script:sec-quick]',
      attachments: [
        {
          file_name: REPORT,
          mime_type: 'text/plain',
          data: Buffer.from('附件').toString('base64'),
        },
      ],
    });
    expect(created.status).toBe(200);
    const listed = await api.get(`/agent/runs/${created.body.run_id}/handoff/attachments`);
    const file = await api.download(listed.body.attachments[0].download_url);
    expect(file.status).toBe(200);
    expect(file.headers['content-disposition']).toBe(REPORT_DISPOSITION);
    expect(file.body).toBe('附件');
  });

  it('refuses a run-attachment signature on the blob route, even for a blob of the same name', async () => {
    model.script('sec-quick', [{ text: 'ok' }]);
    const created = await api.post('/agent/runs', {
      prompt: 'With a file [script:sec-quick]',
      attachments: [
        {
          file_name: 'a.txt',
          mime_type: 'text/plain',
          data: Buffer.from('mine').toString('base64'),
        },
      ],
    });
    const listed = await api.get(`/agent/runs/${created.body.run_id}/handoff/attachments`);
    const minted = new URL(listed.body.attachments[0].download_url as string);
    expect(minted.pathname).toMatch(/^\/api\/v1\/run-attachments\/[^/]+$/);
    expect((await api.download(minted.toString())).body).toBe('mine');

    // A blob whose key is the attachment's grant key, as any blob namespace could hold.
    const key = minted.pathname.replace(/^\/api\/v1\//, '');
    await app.ambient.app.get<BlobStore>(BLOB_STORE).put(key, 'someone else');
    const replayed = new URL(minted);
    replayed.pathname = `/api/v1/blobs/${key}`;
    const refused = await api.download(replayed.toString());
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body as string)).toMatchObject({
      status: 403,
      detail: 'the download URL signature does not match',
    });

    // And the other way: a blob URL's signature (the run's transcript) opens no attachment.
    await waitFor(
      () => api.runState(created.body.run_id as string),
      (state) => state === 'SUCCEEDED',
      { what: 'the run to succeed', timeoutMs: 60_000 },
    );
    const blobUrl = new URL(
      (await api.get(`/agent/runs/${created.body.run_id}/transcript`).redirects(0)).headers
        .location as string,
    );
    const attachmentId = minted.pathname.split('/').pop()!;
    const crossed = new URL(blobUrl);
    crossed.pathname = `/api/v1/run-attachments/${attachmentId}`;
    expect((await api.download(crossed.toString())).status).toBe(403);
  });

  it('never writes an environment share token to the log', async () => {
    const teams = app.ambient.app.get(TeamsService);
    const guests = await teams.createTeam('share-guests');
    const admin = await teams.createUser(guests, { displayName: 'Guest', role: 'admin' });
    const them = apiClient(
      app.baseUrl,
      (await app.ambient.app.get(ApiKeysService).create(admin, 't')).key,
    );
    const environment = await api.post('/agent/environments', { name: 'shared-env' });
    expect(environment.status).toBe(201);
    const link = await api.post(`/agent/environments/${environment.body.uid}/share-link`);
    const token = link.body.share_token as string;
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const accepted = await them.post(`/agent/environments/shared/${token}/accept`);
    expect(accepted.status).toBe(200);

    const acceptLine = await waitFor(
      async () => logLines.find((l) => l.includes('/environments/shared/')),
      (line) => line !== undefined,
      { what: 'the request line of the accept' },
    );
    expect(JSON.parse(acceptLine!)).toMatchObject({
      path: '/api/v1/agent/environments/shared/[token]/accept',
      status_code: 200,
    });
    expect(logLines.filter((l) => l.includes(token))).toEqual([]);
  });
});
