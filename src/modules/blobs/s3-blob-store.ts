import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Readable } from 'node:stream';
import type { S3Settings } from '../../config/app-config';
import { BlobStore, BlobStream, isValidBlobKey, StoredBlob } from './blob-store';

const CHECK_TIMEOUT_MS = 10_000;

/** Blobs as objects of one bucket, on AWS S3 or any S3-compatible store. */
export class S3BlobStore implements BlobStore {
  private readonly client: S3Client;
  private readonly bucket: string;

  constructor(private readonly settings: S3Settings & { bucket: string }) {
    this.bucket = settings.bucket;
    this.client = new S3Client({
      region: settings.region,
      endpoint: settings.endpoint,
      forcePathStyle: settings.forcePathStyle,
      credentials: settings.accessKeyId
        ? { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey ?? '' }
        : undefined,
      // The SDK's default CRC checksums on every upload are not understood by many
      // S3-compatible stores; S3 itself still gets them whenever an operation requires one.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  /** Start-up check: the bucket exists and these credentials may use it. */
  async checkBucket(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }), {
        abortSignal: AbortSignal.timeout(CHECK_TIMEOUT_MS),
      });
    } catch (err) {
      const where = this.settings.endpoint ? ` at ${this.settings.endpoint}` : '';
      throw new Error(
        `AMBIENT_S3_BUCKET: cannot use bucket "${this.bucket}"${where}: ${describe(err)}`,
      );
    }
  }

  async put(key: string, data: Buffer | string): Promise<void> {
    const body = typeof data === 'string' ? Buffer.from(data) : data;
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: this.objectKey(key),
        Body: body,
        ContentLength: body.length,
      }),
    );
  }

  async get(key: string): Promise<StoredBlob | null> {
    const opened = await this.openStream(key);
    if (!opened) return null;
    const chunks: Buffer[] = [];
    for await (const chunk of opened.stream) chunks.push(chunk as Buffer);
    const data = Buffer.concat(chunks);
    return { data, size: data.length };
  }

  async openStream(key: string): Promise<BlobStream | null> {
    try {
      const object = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }),
      );
      return { stream: object.Body as Readable, size: object.ContentLength ?? 0 };
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  async exists(key: string): Promise<boolean> {
    try {
      await this.client.send(
        new HeadObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }),
      );
      return true;
    } catch (err) {
      if (isMissing(err)) return false;
      throw err;
    }
  }

  /** S3 answers a DeleteObject of a missing key with success too. */
  async delete(key: string): Promise<void> {
    await this.client.send(
      new DeleteObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }),
    );
  }

  /** Nest calls this at shutdown (the store is a provider); the preflight calls it itself. */
  onApplicationShutdown(): void {
    this.client.destroy();
  }

  private objectKey(key: string): string {
    if (!isValidBlobKey(key)) throw new Error(`invalid blob key "${key}"`);
    return this.settings.prefix ? `${this.settings.prefix}/${key}` : key;
  }
}

function isMissing(err: unknown): boolean {
  return (
    err instanceof S3ServiceException &&
    (err.name === 'NoSuchKey' || err.name === 'NotFound' || err.$metadata.httpStatusCode === 404)
  );
}

function describe(err: unknown): string {
  if (err instanceof S3ServiceException) {
    const status = err.$metadata.httpStatusCode;
    const reason = status === 404 ? 'no such bucket' : status === 403 ? 'access denied' : err.name;
    return status ? `${reason} (HTTP ${status})` : reason;
  }
  return (err as Error).message;
}
