import { Connection, createConnection } from 'mysql2/promise';
import { createMigratedDatabase, templateDatabaseName } from './support/database-template';
import { isolatedNames, MYSQL_URL, TEST_SECRETS_KEY } from './support/test-app';

/**
 * The specs' databases are copies of a migrated template (test/support/database-template.ts):
 * a copy must be what the migrations make, table for table, so no spec tests a schema the
 * product would not have.
 */
describe('test databases copied from the migrated template', () => {
  const { database } = isolatedNames('template-copy');
  let connection: Connection;

  beforeAll(async () => {
    await createMigratedDatabase(MYSQL_URL, database, TEST_SECRETS_KEY);
    connection = await createConnection(MYSQL_URL);
  }, 180_000);

  afterAll(async () => {
    await connection.query(`DROP DATABASE IF EXISTS \`${database}\``);
    await connection.end();
  });

  /** Every base table's CREATE statement (without the AUTO_INCREMENT counter) and row count. */
  const schemaOf = async (schema: string) => {
    const [tables] = (await connection.query(
      `SELECT TABLE_NAME AS name FROM information_schema.TABLES
        WHERE TABLE_SCHEMA = ? AND TABLE_TYPE = 'BASE TABLE' AND TABLE_NAME <> 'template_ready'
        ORDER BY TABLE_NAME`,
      [schema],
    )) as unknown as [{ name: string }[]];
    const result: Record<string, { create: string; rows: number }> = {};
    for (const { name } of tables) {
      const [[row]] = (await connection.query(
        `SHOW CREATE TABLE \`${schema}\`.\`${name}\``,
      )) as unknown as [Record<string, string>[]];
      const [[{ rows }]] = (await connection.query(
        `SELECT COUNT(*) AS \`rows\` FROM \`${schema}\`.\`${name}\``,
      )) as unknown as [{ rows: number }[]];
      result[name] = {
        create: row['Create Table'].replace(/ AUTO_INCREMENT=\d+/, ''),
        rows: Number(rows),
      };
    }
    return result;
  };

  it('has every table of the migrated template with its columns, indexes, foreign keys and rows', async () => {
    const template = await schemaOf(templateDatabaseName());
    const copy = await schemaOf(database);
    expect(Object.keys(template).length).toBeGreaterThan(20);
    expect(copy).toEqual(template);
    // Every migration is recorded as applied: an app started on the copy migrates nothing.
    expect(copy.migrations.rows).toBeGreaterThan(0);
    const [foreignKeys] = (await connection.query(
      `SELECT COUNT(*) AS n FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = ?`,
      [database],
    )) as unknown as [{ n: number }[]];
    expect(Number(foreignKeys[0].n)).toBeGreaterThan(0);
  });

  it('leaves an existing database as it is', async () => {
    await connection.query(`CREATE TABLE \`${database}\`.kept (id INT)`);
    await createMigratedDatabase(MYSQL_URL, database, TEST_SECRETS_KEY);
    const [rows] = await connection.query(
      `SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = 'kept'`,
      [database],
    );
    expect(rows).toHaveLength(1);
  });
});
