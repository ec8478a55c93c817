import type { DataSource } from 'typeorm';

/** One round trip to the database (health and readiness probes); rejects when it is unreachable. */
export async function pingDatabase(dataSource: DataSource): Promise<void> {
  await dataSource.query('SELECT 1');
}
