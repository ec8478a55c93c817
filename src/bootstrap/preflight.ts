import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import type { AppConfig } from '../config/app-config';
import { S3BlobStore } from '../modules/blobs/s3-blob-store';
import { dataSourceOptions, ensureDatabase, runMigrations } from '../database/database-setup';

/** Fails with one line naming REDIS_URL when Redis does not answer within a few seconds. */
export async function checkRedis(url: string): Promise<void> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 3000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.ping();
  } catch (err) {
    const where = new URL(url);
    throw new Error(
      `REDIS_URL: cannot reach Redis at ${where.hostname}:${where.port || 6379} (${(err as Error).message})`,
    );
  } finally {
    client.disconnect();
  }
}

/** With the s3 blob driver: fails with one line naming the bucket unless it can be used. */
export async function checkBlobStore(config: AppConfig): Promise<void> {
  const { driver, s3 } = config.blobs;
  if (driver !== 's3') return;
  const store = new S3BlobStore({ ...s3, bucket: s3.bucket! });
  try {
    await store.checkBucket();
  } finally {
    store.onApplicationShutdown();
  }
}

/** Creates the database if missing and applies pending migrations (under a named lock). */
export async function prepareDatabase(config: AppConfig): Promise<string[]> {
  await ensureDatabase(config.database.url);
  const dataSource = new DataSource(dataSourceOptions(config));
  await dataSource.initialize();
  try {
    return await runMigrations(dataSource);
  } finally {
    await dataSource.destroy();
  }
}
