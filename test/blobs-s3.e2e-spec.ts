import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { S3BlobStore } from '../src/modules/blobs/s3-blob-store';
import { FakeModelServer, startFakeModelServer } from './fixtures/fake-model-server';
import { FakeS3Server, S3RVER_CREDENTIALS, startFakeS3Server } from './fixtures/s3-server';
import { apiClient } from './support/api-client';
import { createTestEnvironment, startTestApp, TestApp, TestEnvironment } from './support/test-app';
import { waitFor } from './support/wait';
import { spawnAmbient, waitForExit } from './support/worker-process';

/** AMBIENT_BLOB_DRIVER=s3: transcripts and artifact files live in a bucket, served as before. */
describe('blob storage in an S3-compatible bucket', () => {
  let model: FakeModelServer;
  let s3: FakeS3Server;
  let env: TestEnvironment;
  let app: TestApp;
  let api: ReturnType<typeof apiClient>;
  let bucket: S3BlobStore;
  const settings = () => ({
    'blobs.driver': 's3',
    'blobs.s3.bucket': 'ambient',
    'blobs.s3.endpoint': s3.endpoint,
    'blobs.s3.forcePathStyle': true,
    'blobs.s3.prefix': 'e2e',
    'blobs.s3.accessKeyId': S3RVER_CREDENTIALS.accessKeyId,
    'blobs.s3.secretAccessKey': S3RVER_CREDENTIALS.secretAccessKey,
  });

  beforeAll(async () => {
    model = await startFakeModelServer();
    s3 = await startFakeS3Server(['ambient']);
    env = createTestEnvironment('blobs_s3', model.url);
    app = await startTestApp(env, ['api', 'worker'], settings());
    api = apiClient(app.baseUrl, app.apiKey);
    bucket = new S3BlobStore({
      bucket: 'ambient',
      region: 'us-east-1',
      endpoint: s3.endpoint,
      forcePathStyle: true,
      prefix: 'e2e',
      ...S3RVER_CREDENTIALS,
    });
  });

  afterAll(async () => {
    bucket?.onApplicationShutdown();
    await app?.close();
    await env?.destroy();
    await s3?.close();
    await model?.close();
  });

  it('stores the transcript and a FILE artifact in the bucket and serves them through signed URLs', async () => {
    const content = 'row\n'.repeat(50_000);
    model.script('s3', [
      {
        toolCalls: [
          { name: 'write_file', arguments: { path: 'rows.txt', content } },
          {
            name: 'report_artifact',
            arguments: { artifact_type: 'FILE', path: 'rows.txt', mime_type: 'text/plain' },
          },
        ],
      },
      { text: 'Stored.' },
    ]);
    const created = await api.post('/agent/runs', { prompt: 'Store rows [script:s3]' });
    const runId = created.body.run_id as string;
    const run = await waitFor(
      async () => (await api.get(`/agent/runs/${runId}`)).body,
      (r) => r.state === 'SUCCEEDED',
      { what: 'the run to succeed' },
    );

    const artifact = run.artifacts.find(
      (a: { artifact_type: string }) => a.artifact_type === 'FILE',
    );
    const uid = String(artifact.data.artifact_uid);
    expect(await bucket.exists(`artifacts/${uid}`)).toBe(true);
    const file = await api.download(
      (await api.get(`/agent/artifacts/${uid}`)).body.data.download_url as string,
    );
    expect(file.status).toBe(200);
    expect(file.headers['content-length']).toBe(String(content.length));
    expect(file.body).toBe(content);

    const transcript = await api.transcriptText(runId);
    expect(transcript).toContain('Stored.');
    // Nothing went to the local blob directory.
    expect(existsSync(join(env.workspaceRoot, '.blobs'))).toBe(false);
  });

  it('stops start-up with one line when the bucket cannot be used', async () => {
    const ambient = spawnAmbient(
      env.childEnv({
        AMBIENT_ROLES: 'api',
        AMBIENT_PORT: '0',
        AMBIENT_BLOB_DRIVER: 's3',
        AMBIENT_S3_BUCKET: 'no-such-bucket',
        AMBIENT_S3_ENDPOINT: s3.endpoint,
        AMBIENT_S3_FORCE_PATH_STYLE: 'true',
        AMBIENT_S3_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
        AMBIENT_S3_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
        // The SDK's notice that future versions need Node 22 is not what this test reads.
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      }),
    );
    ambient.ready.catch(() => undefined);
    expect(await waitForExit(ambient.child)).toBe(1);
    expect((await ambient.finalOutput()).trim()).toBe(
      `ambient: AMBIENT_S3_BUCKET: cannot use bucket "no-such-bucket" at ${s3.endpoint}: no such bucket (HTTP 404)`,
    );
  });
});
