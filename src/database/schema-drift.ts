import { DataSource, EntityMetadata } from 'typeorm';
import type { MysqlDataSourceOptions } from 'typeorm/driver/mysql/MysqlDataSourceOptions';
import type { AppConfig } from '../config/app-config';
import { connectToServer, dataSourceOptions } from './database-setup';

/** How a migrated database differs from what the entities declare. */
export interface SchemaDrift {
  /** What TypeORM's schema builder would run to make the database match the entities. */
  up: { query: string; parameters?: unknown[] }[];
  /** The statements that undo `up`, newest first. */
  down: { query: string; parameters?: unknown[] }[];
  /**
   * What the schema builder does not compare, as sentences: a column's collation, the order of an
   * index's, primary key's or foreign key's columns, and tables no entity maps.
   */
  differences: string[];
}

/** The table TypeORM keeps the applied migrations in: no entity maps it (TypeORM owns it). */
const MIGRATIONS_TABLE = 'migrations';

/**
 * A DataSource on the configured database with `entities`, to compare schemas: TypeORM reads
 * MariaDB's information_schema right only as `type: 'mariadb'` (there a nullable column's default
 * is the text NULL and JSON is LONGTEXT), so the server decides the type. Not for serving the app.
 */
export async function comparingDataSource(
  config: AppConfig,
  entities: NonNullable<MysqlDataSourceOptions['entities']>,
): Promise<DataSource> {
  const options = dataSourceOptions(config) as MysqlDataSourceOptions;
  const type = (await isMariaDb(config.database.url)) ? 'mariadb' : 'mysql';
  const dataSource = new DataSource({ ...options, type, entities, extra: { connectionLimit: 2 } });
  await dataSource.initialize();
  // InnoDB's NO ACTION is RESTRICT, and a foreign key declared without an action reads back as
  // NO ACTION from MySQL 8 but RESTRICT from MariaDB: the entity's either is the server's word.
  const noAction = type === 'mariadb' ? 'RESTRICT' : 'NO ACTION';
  for (const key of dataSource.entityMetadatas.flatMap((entity) => entity.foreignKeys)) {
    if (key.onDelete === 'NO ACTION' || key.onDelete === 'RESTRICT') key.onDelete = noAction;
    if (key.onUpdate === 'NO ACTION' || key.onUpdate === 'RESTRICT') key.onUpdate = noAction;
  }
  return dataSource;
}

async function isMariaDb(url: string): Promise<boolean> {
  const connection = await connectToServer(url);
  try {
    const [rows] = await connection.query('SELECT VERSION() AS version');
    return /mariadb/i.test(String((rows as { version: string }[])[0].version));
  } finally {
    await connection.end();
  }
}

/** How the database `dataSource` is connected to differs from its entities. */
export async function schemaDrift(dataSource: DataSource): Promise<SchemaDrift> {
  const log = await dataSource.driver.createSchemaBuilder().log();
  return {
    up: log.upQueries.map(({ query, parameters }) => ({ query, parameters })),
    down: log.downQueries.map(({ query, parameters }) => ({ query, parameters })).reverse(),
    differences: await uncomparedDifferences(dataSource),
  };
}

interface ColumnRow {
  table: string;
  column: string;
  collation: string | null;
}
interface KeyRow {
  table: string;
  name: string;
  column: string;
  referenced: string | null;
}

async function uncomparedDifferences(dataSource: DataSource): Promise<string[]> {
  const query = <T>(sql: string) => dataSource.query(sql) as Promise<T[]>;
  const [tables, columns, indexes, keys, [{ collation }], charsets] = await Promise.all([
    query<{ table: string }>(
      `SELECT TABLE_NAME AS \`table\` FROM information_schema.TABLES
        WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE = 'BASE TABLE'`,
    ),
    query<ColumnRow>(
      `SELECT TABLE_NAME AS \`table\`, COLUMN_NAME AS \`column\`, COLLATION_NAME AS collation
         FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE()`,
    ),
    query<KeyRow>(
      `SELECT TABLE_NAME AS \`table\`, INDEX_NAME AS name, COLUMN_NAME AS \`column\`, NULL AS referenced
         FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE()
        ORDER BY TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX`,
    ),
    query<KeyRow>(
      `SELECT TABLE_NAME AS \`table\`, CONSTRAINT_NAME AS name, COLUMN_NAME AS \`column\`,
              REFERENCED_COLUMN_NAME AS referenced
         FROM information_schema.KEY_COLUMN_USAGE
        WHERE TABLE_SCHEMA = DATABASE() AND REFERENCED_TABLE_NAME IS NOT NULL
        ORDER BY TABLE_NAME, CONSTRAINT_NAME, ORDINAL_POSITION`,
    ),
    query<{ collation: string }>(`SELECT @@collation_database AS collation`),
    query<{ charset: string; collation: string }>(
      `SELECT CHARACTER_SET_NAME AS charset, DEFAULT_COLLATE_NAME AS collation
         FROM information_schema.CHARACTER_SETS`,
    ),
  ]);
  const defaultCollation = new Map(charsets.map((c) => [c.charset, c.collation]));
  const entities = dataSource.entityMetadatas;
  const mapped = new Set(entities.map((entity) => entity.tableName));
  const problems = tables
    .filter(({ table }) => table !== MIGRATIONS_TABLE && !mapped.has(table))
    .map(({ table }) => `table ${table}: no entity maps it`);
  for (const entity of entities) {
    problems.push(
      ...collationDifferences(entity, columns, collation, defaultCollation),
      ...keyOrderDifferences(entity, indexes, keys),
    );
  }
  return problems;
}

/**
 * An entity column's collation: its own, else its charset's default, else the database's. JSON
 * columns are left out: MariaDB's are LONGTEXT utf8mb4_bin, MySQL's have no collation.
 */
function collationDifferences(
  entity: EntityMetadata,
  columns: ColumnRow[],
  databaseCollation: string,
  defaultCollation: Map<string, string>,
): string[] {
  return entity.columns.flatMap((column) => {
    const row = columns.find(
      (c) => c.table === entity.tableName && c.column === column.databaseName,
    );
    if (!row || column.type === 'json') return [];
    const declared =
      column.collation ?? (column.charset ? defaultCollation.get(column.charset) : undefined);
    const agrees =
      row.collation === null ? !declared : row.collation === (declared ?? databaseCollation);
    if (agrees) return [];
    return [
      `column ${entity.tableName}.${column.databaseName}: collation ${row.collation ?? 'none'} in the database, ${declared ?? `none (the database's ${databaseCollation})`} on the entity`,
    ];
  });
}

/** The schema builder compares the columns of keys as sets; their order matters to an index. */
function keyOrderDifferences(entity: EntityMetadata, indexes: KeyRow[], keys: KeyRow[]): string[] {
  const inDatabase = (rows: KeyRow[], name: string) =>
    rows.filter((row) => row.table === entity.tableName && row.name === name);
  const compare = (what: string, declared: string[], actual: KeyRow[]) => {
    const columns = actual.map((row) => row.column);
    return actual.length && columns.join() !== declared.join()
      ? [
          `${what} of ${entity.tableName}: the database has (${columns.join(', ')}), the entity declares (${declared.join(', ')})`,
        ]
      : [];
  };
  return [
    ...compare(
      'primary key',
      entity.primaryColumns.map((c) => c.databaseName),
      inDatabase(indexes, 'PRIMARY'),
    ),
    ...entity.indices.flatMap((index) =>
      compare(
        `index ${index.name}`,
        index.columns.map((c) => c.databaseName),
        inDatabase(indexes, index.name!),
      ),
    ),
    ...entity.foreignKeys.flatMap((key) => [
      ...compare(
        `foreign key ${key.name}`,
        key.columns.map((c) => c.databaseName),
        inDatabase(keys, key.name),
      ),
      ...compare(
        `foreign key ${key.name}'s referenced columns`,
        key.referencedColumns.map((c) => c.databaseName),
        inDatabase(keys, key.name).map((row) => ({ ...row, column: row.referenced ?? '' })),
      ),
    ]),
  ];
}

/** The drift as one message: every statement and difference on a line of its own. */
export function describeDrift(drift: SchemaDrift): string {
  return [
    ...drift.up.map((statement) => `  ${statement.query};`),
    ...drift.differences.map((problem) => `  ${problem}`),
  ].join('\n');
}
