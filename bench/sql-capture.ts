import type { DataSource } from 'typeorm';

export interface CapturedQuery {
  sql: string;
  parameters: unknown[];
}

/**
 * The statements TypeORM sends while `action` runs (it reports every query to its logger, whether
 * or not logging is on), so the bench can EXPLAIN exactly what the API executed. Statements sent
 * straight on the pool (RawSql: the hot writes, selectEntities outside a transaction) are not seen.
 */
export async function captureQueries(
  dataSource: DataSource,
  action: () => Promise<unknown>,
): Promise<CapturedQuery[]> {
  const logger = dataSource.logger;
  const original = logger.logQuery;
  const captured: CapturedQuery[] = [];
  logger.logQuery = (sql, parameters, queryRunner) => {
    captured.push({ sql, parameters: Array.isArray(parameters) ? parameters : [] });
    return original.call(logger, sql, parameters, queryRunner);
  };
  try {
    await action();
  } finally {
    logger.logQuery = original;
  }
  return captured;
}

export interface PlanRow {
  table: string;
  type: string;
  key: string | null;
  rows: string;
  /** Rows actually read (MariaDB's ANALYZE statement); null on MySQL. */
  actualRows: string | null;
  extra: string;
}

/** EXPLAIN (MariaDB: ANALYZE, which also runs the query and reports rows actually read). */
export async function explain(dataSource: DataSource, query: CapturedQuery): Promise<PlanRow[]> {
  const [version] = (await dataSource.query('SELECT VERSION() AS v')) as { v: string }[];
  const verb = version.v.includes('MariaDB') ? 'ANALYZE' : 'EXPLAIN';
  const rows = (await dataSource.query(`${verb} ${query.sql}`, query.parameters)) as Record<
    string,
    string | null
  >[];
  return rows.map((row) => ({
    table: row.table ?? '',
    type: row.type ?? '',
    key: row.key,
    rows: String(row.rows ?? ''),
    actualRows: row.r_rows === undefined ? null : String(row.r_rows),
    extra: row.Extra ?? '',
  }));
}

export function formatPlan(plan: PlanRow[]): string {
  return plan
    .map(
      (p) =>
        `table=${p.table} type=${p.type} key=${p.key ?? 'NULL'} rows(est)=${p.rows}` +
        (p.actualRows === null ? '' : ` rows(read)=${p.actualRows}`) +
        ` extra="${p.extra}"`,
    )
    .join('\n');
}
