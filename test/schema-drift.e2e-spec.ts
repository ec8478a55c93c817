// The composition root: loading it registers every entity the app maps (TypeORM's metadata).
import '../src/app.module';
import { createConnection } from 'mysql2/promise';
import { DataSource } from 'typeorm';
import { loadConfig } from '../src/config/app-config';
import { prepareDatabase } from '../src/bootstrap/preflight';
import { loadedEntities } from '../src/database/database.module';
import { comparingDataSource, describeDrift, schemaDrift } from '../src/database/schema-drift';
import { isolatedNames, MYSQL_URL } from './support/test-app';

/**
 * The entities own the schema: a database migrated from nothing is exactly what they declare, so
 * TypeORM's schema builder has nothing to do and `npm run migration:generate` writes only what a
 * change to an entity asks for (docs/development-database.md).
 */
describe('schema drift', () => {
  const { database } = isolatedNames('schema-drift');
  const config = loadConfig(
    { AMBIENT_CONFIG_FILE: 'config/default.yaml' },
    { 'database.url': `${MYSQL_URL}/${database}` },
  );
  let dataSource: DataSource | undefined;

  beforeAll(async () => {
    // The migrate command's own path: create the database, apply every migration under the lock.
    await prepareDatabase(config);
    dataSource = await comparingDataSource(config, loadedEntities());
  }, 180_000);

  afterAll(async () => {
    await dataSource?.destroy();
    const connection = await createConnection(MYSQL_URL);
    await connection.query(`DROP DATABASE IF EXISTS \`${database}\``);
    await connection.end();
  });

  it('leaves the schema builder nothing to change after every migration ran, nor anything it misses', async () => {
    const drift = await schemaDrift(dataSource!);
    const found = drift.up.length + drift.differences.length;
    if (found > 0) {
      throw new Error(
        `the migrated database differs from the entities in ${found} way(s); declare on the entity what the migrations create (or add a migration: npm run migration:generate):\n${describeDrift(drift)}`,
      );
    }
    expect(drift.up).toEqual([]);
    expect(drift.differences).toEqual([]);
  });
});
