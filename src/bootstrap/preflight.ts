import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import type { AppConfig } from '../config/app-config';
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
