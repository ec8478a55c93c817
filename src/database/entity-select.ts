import { QueryFailedError } from 'typeorm';
import type { DataSource, EntityManager, EntityTarget, ObjectLiteral } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import type { EntityMetadata } from 'typeorm/metadata/EntityMetadata';
import { RawSql } from './raw-sql';

interface EntityHead {
  meta: EntityMetadata;
  columns: ColumnMetadata[];
  /** `col`, `col2`, … : the selectable columns, unqualified. */
  list: string;
}

/** The entity's selectable columns, listed once per entity. */
const heads = new WeakMap<object, EntityHead>();

function entityHead(dataSource: DataSource, entity: EntityTarget<ObjectLiteral>): EntityHead {
  const meta = dataSource.getMetadata(entity);
  let head = heads.get(meta);
  if (!head) {
    const columns = meta.columns.filter((column) => column.isSelect && !column.isVirtual);
    const list = columns.map((column) => `\`${column.databaseName}\``).join(', ');
    head = { meta, columns, list };
    heads.set(meta, head);
  }
  return head;
}

/**
 * The entity's selectable columns for a statement's select list, each `alias`.`column`, for a
 * statement of its own whose rows go to hydrateEntities (a join that selects one entity's row).
 */
export function entityColumnList(
  dataSource: DataSource,
  entity: EntityTarget<ObjectLiteral>,
  alias: string,
): string {
  const { columns } = entityHead(dataSource, entity);
  return columns.map((column) => `\`${alias}\`.\`${column.databaseName}\``).join(', ');
}

/**
 * The entity's rows that match `where` (with `?` parameters; arrays expand for `IN (?)`), in
 * `orderBy` when given, each column hydrated by TypeORM's driver as its own reads do (JSON,
 * booleans, dates, the columns' transformers) into an instance of the entity. Plain SQL on
 * `manager` (a caller's transaction) or straight on the pool's connections (RawSql: no query
 * runner per statement). TypeORM's finds rebuild the statement and alias
 * every column of every row: 0.27-0.35 ms of CPU each (mysql2's part included) for the reads of
 * an execution's start; a 150-run page of the run list took 4.68 ms of the server's CPU with
 * them and 3.98 ms this way (2-vCPU VM, alternating).
 */
export async function selectEntities<T extends ObjectLiteral>(
  dataSource: DataSource,
  entity: EntityTarget<T>,
  query: { where: string; params: unknown[]; orderBy?: string; manager?: EntityManager },
): Promise<T[]> {
  const { meta, list } = entityHead(dataSource, entity);
  const order = query.orderBy ? ` ORDER BY ${query.orderBy}` : '';
  const sql = `SELECT ${list} FROM \`${meta.tableName}\` WHERE ${query.where}${order}`;
  const rows = (
    query.manager
      ? await query.manager.query(sql, query.params)
      : await readOnPool(dataSource, sql, query.params)
  ) as Record<string, unknown>[];
  return hydrateEntities(dataSource, entity, rows);
}

/**
 * The statement on a pooled connection; a failure is a QueryFailedError made here, as TypeORM's
 * reads throw, whose stack names the callers (mysql2's own holds only its socket's frames).
 */
async function readOnPool(
  dataSource: DataSource,
  sql: string,
  params: unknown[],
): Promise<unknown> {
  try {
    return await new RawSql(dataSource).query(sql, params);
  } catch (err) {
    throw new QueryFailedError(sql, params, err as Error);
  }
}

/** Rows holding the entity's columns by their names (and maybe others), as entity instances. */
export function hydrateEntities<T extends ObjectLiteral>(
  dataSource: DataSource,
  entity: EntityTarget<T>,
  rows: Record<string, unknown>[],
): T[] {
  const { meta, columns } = entityHead(dataSource, entity);
  const driver = dataSource.driver;
  return rows.map((row) => {
    const hydrated = meta.create() as T;
    for (const column of columns) {
      const value = row[column.databaseName];
      if (value !== undefined) {
        column.setEntityValue(hydrated, driver.prepareHydratedValue(value, column));
      }
    }
    return hydrated;
  });
}
