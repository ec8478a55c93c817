import { loadConfig } from '../../config/app-config';
import {
  FakeS3Server,
  S3RVER_CREDENTIALS,
  startFakeS3Server,
} from '../../../test/fixtures/s3-server';
import { S3BlobStore } from './s3-blob-store';

// A real HTTP server and the SDK's first load: more than unit tests' 5 s on a busy machine.
jest.setTimeout(30_000);

/** Against a real S3-compatible HTTP server (s3rver), through the AWS SDK. */
describe('S3BlobStore', () => {
  let server: FakeS3Server;
  const stores: S3BlobStore[] = [];
  const storeFor = (overrides: Partial<ConstructorParameters<typeof S3BlobStore>[0]> = {}) => {
    const store = new S3BlobStore({
      bucket: 'blobs',
      region: 'us-east-1',
      endpoint: server.endpoint,
      forcePathStyle: true,
      ...S3RVER_CREDENTIALS,
      ...overrides,
    });
    stores.push(store);
    return store;
  };

  beforeAll(async () => {
    server = await startFakeS3Server(['blobs']);
  });
  afterAll(async () => {
    for (const store of stores) store.onApplicationShutdown();
    await server?.close();
  });

  it('stores, replaces, reads back and streams objects', async () => {
    const store = storeFor();
    expect(await store.get('artifacts/a1')).toBeNull();
    expect(await store.openStream('artifacts/a1')).toBeNull();
    expect(await store.exists('artifacts/a1')).toBe(false);
    await store.put('artifacts/a1', 'first');
    await store.put('artifacts/a1', Buffer.from('second'));
    expect(await store.exists('artifacts/a1')).toBe(true);
    expect(await store.get('artifacts/a1')).toEqual({ data: Buffer.from('second'), size: 6 });

    const big = Buffer.alloc(300_000, 7);
    await store.put('transcripts/t1.jsonl', big);
    const opened = await store.openStream('transcripts/t1.jsonl');
    const chunks: Buffer[] = [];
    for await (const chunk of opened!.stream) chunks.push(chunk as Buffer);
    expect(opened!.size).toBe(big.length);
    expect(Buffer.concat(chunks).equals(big)).toBe(true);
  });

  it('deletes an object of its own prefix only, and a missing one without an error', async () => {
    const prod = storeFor({ prefix: 'ambient/prod' });
    const staging = storeFor({ prefix: 'ambient/staging' });
    await prod.put('artifacts/d1', 'prod');
    await staging.put('artifacts/d1', 'staging');
    await prod.delete('artifacts/d1');
    await prod.delete('artifacts/d1');
    expect(await prod.exists('artifacts/d1')).toBe(false);
    expect((await staging.get('artifacts/d1'))?.data.toString()).toBe('staging');
  });

  it('keeps stores with different prefixes apart in one bucket', async () => {
    const prod = storeFor({ prefix: 'ambient/prod' });
    const staging = storeFor({ prefix: 'ambient/staging' });
    await prod.put('artifacts/shared', 'prod');
    expect(await staging.exists('artifacts/shared')).toBe(false);
    expect((await prod.get('artifacts/shared'))?.data.toString()).toBe('prod');
  });

  it('refuses keys that are not <namespace>/<name>', async () => {
    await expect(storeFor().put('../x/y', 'no')).rejects.toThrow('invalid blob key');
  });

  it('checks the bucket at start-up, naming it when it cannot be used', async () => {
    await expect(storeFor().checkBucket()).resolves.toBeUndefined();
    await expect(storeFor({ bucket: 'missing' }).checkBucket()).rejects.toThrow(
      `AMBIENT_S3_BUCKET: cannot use bucket "missing" at ${server.endpoint}: no such bucket (HTTP 404)`,
    );
    await expect(
      storeFor({ accessKeyId: 'UNKNOWN', secretAccessKey: 'x' }).put('artifacts/a', 'x'),
    ).rejects.toThrow(/Access Key Id/);
  });
});

describe('S3 settings', () => {
  const base = { AMBIENT_CONFIG_FILE: 'config/default.yaml' };

  it('stay unused with the local driver, and need a bucket with the s3 driver', () => {
    expect(loadConfig(base).blobs).toMatchObject({ driver: 'local', s3: { region: 'us-east-1' } });
    expect(() => loadConfig({ ...base, AMBIENT_BLOB_DRIVER: 's3' })).toThrow(
      'AMBIENT_S3_BUCKET: missing (required with AMBIENT_BLOB_DRIVER=s3)',
    );
    expect(() => loadConfig({ ...base, AMBIENT_BLOB_DRIVER: 'gcs' })).toThrow(
      'AMBIENT_BLOB_DRIVER: must be one of local, s3 (got "gcs")',
    );
    const s3 = loadConfig({
      ...base,
      AMBIENT_BLOB_DRIVER: 's3',
      AMBIENT_S3_BUCKET: 'ambient-blobs',
      AMBIENT_S3_ENDPOINT: 'http://minio:9000',
      AMBIENT_S3_FORCE_PATH_STYLE: 'true',
      AMBIENT_S3_PREFIX: 'ambient/prod',
    }).blobs.s3;
    expect(s3).toMatchObject({
      bucket: 'ambient-blobs',
      endpoint: 'http://minio:9000',
      forcePathStyle: true,
      prefix: 'ambient/prod',
    });
    expect(s3.accessKeyId).toBeUndefined();
  });

  it('refuses half a key pair and prefixes that are not clean paths', () => {
    expect(() => loadConfig({ ...base, AMBIENT_S3_ACCESS_KEY_ID: 'AKIA' })).toThrow(
      'AMBIENT_S3_ACCESS_KEY_ID, AMBIENT_S3_SECRET_ACCESS_KEY: set both or neither',
    );
    expect(() => loadConfig({ ...base, AMBIENT_S3_PREFIX: '/abs/' })).toThrow('AMBIENT_S3_PREFIX');
  });
});
