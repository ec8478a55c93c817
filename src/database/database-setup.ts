import { Connection, createConnection } from 'mysql2/promise';
import { DataSource, DataSourceOptions } from 'typeorm';
import { migrationsWithKeys } from '../../migrations';
import { AppConfig } from '../config/app-config';
import { cannotConnect, parseDatabaseUrl } from './database-url';
import { whileNamedLockHeld } from './named-lock';

/** A connection to the database server of `url` (no database selected); refused with the setting named. */
export async function connectToServer(url: string): Promise<Connection> {
  const location = parseDatabaseUrl(url);
  try {
    return await createConnection({
      host: location.host,
      port: location.port,
      socketPath: location.socketPath,
      user: location.user,
      password: location.password,
      connectTimeout: 5000,
    });
  } catch (err) {
    throw cannotConnect(location, err);
  }
}

/** Creates the configured database when it does not exist yet (utf8mb4). */
export async function ensureDatabase(url: string): Promise<void> {
  const location = parseDatabaseUrl(url);
  const connection = await connectToServer(url);
  try {
    await connection.query(
      `CREATE DATABASE IF NOT EXISTS \`${location.database}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`,
    );
  } finally {
    await connection.end();
  }
}

export function dataSourceOptions(config: AppConfig): DataSourceOptions {
  const location = parseDatabaseUrl(config.database.url);
  return {
    type: 'mysql',
    host: location.host,
    port: location.port,
    socketPath: location.socketPath,
    username: location.user,
    password: location.password,
    database: location.database,
    timezone: 'Z',
    charset: 'utf8mb4_unicode_ci',
    synchronize: false,
    migrationsRun: false,
    migrations: migrationsWithKeys(config),
    supportBigNumbers: true,
    bigNumberStrings: true,
    // trace: false — mysql2 otherwise captures a stack trace for every query (to put the caller
    // on a failed query's error): the largest single cost of the event loop when 100 runs execute
    // at once. A failed query's error keeps its message, code and SQL.
    extra: { connectTimeout: 5000, connectionLimit: config.database.poolSize, trace: false },
  };
}

/**
 * True when migrations are pending (also when the database does not exist yet); applies nothing.
 * For processes that wait for a separate migration step (`migrate --check`).
 */
export async function hasPendingMigrations(config: AppConfig): Promise<boolean> {
  const location = parseDatabaseUrl(config.database.url);
  const dataSource = new DataSource({
    ...dataSourceOptions(config),
    extra: { connectTimeout: 5000, connectionLimit: 1 },
  });
  try {
    await dataSource.initialize();
  } catch (err) {
    if ((err as { code?: string }).code === 'ER_BAD_DB_ERROR') return true;
    throw cannotConnect(location, err);
  }
  try {
    return await dataSource.showMigrations();
  } finally {
    await dataSource.destroy();
  }
}

/**
 * Runs pending migrations under a MySQL named lock, so replicas starting together migrate once.
 */
export async function runMigrations(dataSource: DataSource): Promise<string[]> {
  const outcome = await whileNamedLockHeld(dataSource, 'migrations', 120, async () => {
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    return applied.map((m) => m.name);
  });
  if (!outcome.locked) throw new Error('timed out waiting for the migration lock');
  return outcome.value;
}
