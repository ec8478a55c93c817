import { DataSource } from 'typeorm';
import { loadedEntities } from '../../../src/database/database.module';
import { createMigratedDatabase } from '../database-template';
import { TEST_SECRETS_KEY } from '../test-keys';

const connection = {
  type: 'mysql' as const,
  host: process.env.DATABASE_HOST ?? '127.0.0.1',
  port: Number(process.env.DATABASE_PORT ?? 3306),
  username: process.env.DATABASE_USER ?? 'root',
  password: process.env.DATABASE_PASSWORD ?? '',
};

export interface TestDatabase {
  /** The migrated database, once beforeAll has run. */
  readonly dataSource: DataSource;
  /** A team created with the database, for rows that need one. */
  readonly teamId: string;
}

/**
 * A throw-away, migrated MariaDB/MySQL database for the `*.db.spec.ts` of this describe block, on
 * 127.0.0.1:3306 (root, no password, or DATABASE_HOST/PORT/USER/PASSWORD); dropped afterwards.
 */
export function useTestDatabase(label: string): TestDatabase {
  const database = `ambient_${label}_${process.pid}_${Date.now() % 100000}`;
  const teamId = `Team${label.replace(/[^A-Za-z0-9]/g, '').slice(0, 10)}`.padEnd(22, 'T');
  let dataSource: DataSource | undefined;
  // Statements on a real server: the unit project's 5 s is too short on a busy machine.
  jest.setTimeout(30_000);

  beforeAll(async () => {
    const { username, password, host, port } = connection;
    const server = `mysql://${encodeURIComponent(username)}${password ? `:${encodeURIComponent(password)}` : ''}@${host}:${port}`;
    // A copy of the migrated template (test/support/database-template.ts), as the e2e apps get.
    await createMigratedDatabase(server, database, TEST_SECRETS_KEY);
    dataSource = new DataSource({
      ...connection,
      database,
      // The entities the spec imported, as the app registers every entity it loaded.
      entities: loadedEntities(),
      synchronize: false,
      timezone: 'Z',
      charset: 'utf8mb4_unicode_ci',
    });
    await dataSource.initialize();
    await dataSource.query(`INSERT INTO teams (id, name, created_at) VALUES (?, ?, ?)`, [
      teamId,
      label,
      new Date(),
    ]);
  }, 60_000);

  afterAll(async () => {
    if (dataSource?.isInitialized) {
      await dataSource.query(`DROP DATABASE IF EXISTS \`${database}\``);
      await dataSource.destroy();
    }
  });

  return {
    get dataSource() {
      if (!dataSource) throw new Error(`useTestDatabase(${label}): used before beforeAll`);
      return dataSource;
    },
    teamId,
  };
}
