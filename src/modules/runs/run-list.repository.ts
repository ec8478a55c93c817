import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ApiError } from '../../common/errors/api-error';
import { entityColumnList, hydrateEntities, selectEntities } from '../../database/entity-select';
import { Run } from './entities/run.entity';
import { decodeRunCursor, encodeRunCursor, malformed, RunCursorPosition } from './run-list.cursor';
import { RunListPage, RunListParams, RunSortField } from './run-list.params';
import { buildRunSearch, RunSearch } from './run-list.search';
import {
  buildRunPageQuery,
  buildRunRowsQuery,
  pageRowsInOneStatement,
  RUN_PAGE_SEGMENTS,
  RunPageQueryInput,
} from './run-list.sql';

/** A page's row: its keyset position, and its run (gone if deleted between two statements). */
interface PageRow {
  id: string;
  sortValue: unknown;
  run: Run | undefined;
}

/** MySQL's ER_KEY_DOES_NOT_EXITS: an index named in FORCE INDEX is gone (dropped by a migration). */
const KEY_DOES_NOT_EXIST = 1176;

@Injectable()
export class RunListQuery {
  private indexHint: Promise<string> | null = null;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async list(teamId: string, params: RunListParams): Promise<RunListPage> {
    const position = params.cursor ? decodeRunCursor(params.cursor, params) : null;
    if (params.ancestorRunId !== undefined) {
      await this.assertAncestorVisible(teamId, params.ancestorRunId);
    }
    const search = params.q === undefined ? null : buildRunSearch(params.q);
    if (search && !search.runId && !search.fullText) return { runs: [], nextCursor: null };

    const rows = await this.pageRows(teamId, params, search, position);
    const runs = rows.slice(0, params.limit).flatMap((row) => row.run ?? []);
    const last = rows[params.limit - 1];
    const nextCursor =
      rows.length > params.limit
        ? encodeRunCursor(params, { value: sortValue(params.sortBy, last), id: last.id })
        : null;
    return { runs, nextCursor };
  }

  /** Up to limit + 1 runs (with their sort values) after `position`, walking the sort's segments. */
  private async pageRows(
    teamId: string,
    params: RunListParams,
    search: RunSearch | null,
    position: RunCursorPosition | null,
  ): Promise<PageRow[]> {
    const segments = RUN_PAGE_SEGMENTS[params.sortBy];
    const start = position
      ? segments.findIndex((s) => (s.column === null) === (position.value === null))
      : 0;
    if (start < 0) throw malformed();
    const rows: PageRow[] = [];
    for (let i = start; i < segments.length && rows.length <= params.limit; i++) {
      const input = {
        teamId,
        params,
        search,
        segment: segments[i],
        after: i === start ? position : null,
        limit: params.limit + 1 - rows.length,
      };
      rows.push(...(await this.queryPage(input)));
    }
    return rows;
  }

  private async queryPage(input: RunPageQueryInput, retried = false): Promise<PageRow[]> {
    const hinted = { ...input, indexHint: await this.runIndexHint() };
    try {
      return pageRowsInOneStatement(input.params.sortBy)
        ? await this.pageWithRows(hinted)
        : await this.pageThenRows(hinted);
    } catch (err) {
      if (retried || (err as { errno?: number }).errno !== KEY_DOES_NOT_EXIST) throw err;
      this.indexHint = null;
      return this.queryPage(input, true);
    }
  }

  private async pageWithRows(input: RunPageQueryInput): Promise<PageRow[]> {
    const columns = entityColumnList(this.dataSource, Run, 'r0');
    const { sql, params } = buildRunRowsQuery(input, columns);
    const rows = (await this.dataSource.query(sql, params)) as Record<string, unknown>[];
    const runs = hydrateEntities(this.dataSource, Run, rows);
    return runs.map((run, i) => ({ id: run.id, sortValue: rows[i].page_sort_value, run }));
  }

  private async pageThenRows(input: RunPageQueryInput): Promise<PageRow[]> {
    const { sql, params } = buildRunPageQuery(input);
    const page = (await this.dataSource.query(sql, params)) as {
      id: string;
      sort_value: unknown;
    }[];
    if (!page.length) return [];
    const runs = await selectEntities(this.dataSource, Run, {
      where: 'id IN (?) AND team_id = ?',
      params: [page.map((row) => row.id), input.teamId],
    });
    const byId = new Map(runs.map((run) => [run.id, run]));
    return page.map((row) => ({ id: row.id, sortValue: row.sort_value, run: byId.get(row.id) }));
  }

  /**
   * ` FORCE INDEX (<every index of runs>)`: it rules out only the full table scan. Without it
   * MariaDB, costing a keyset range as if every matching row had to be read, prefers walking the
   * (team_id, ...) index from the top, which reads every row before the cursor: seconds on a
   * deep page of a team with a million runs instead of milliseconds. The names are read from the
   * schema so that migrations adding or renaming indexes need no change here.
   */
  private runIndexHint(): Promise<string> {
    this.indexHint ??= this.dataSource
      .query(
        'SELECT DISTINCT INDEX_NAME AS name FROM information_schema.STATISTICS ' +
          "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'runs'",
      )
      .then((rows: { name: string }[]) => {
        const names = rows.map((row) => row.name).filter((name) => /^\w{1,64}$/.test(name));
        return names.length ? ` FORCE INDEX (${names.map((n) => `\`${n}\``).join(', ')})` : '';
      })
      .catch(() => {
        // Without the hint the query is still correct, only slower on deep pages; retry later.
        this.indexHint = null;
        return '';
      });
    return this.indexHint;
  }

  private async assertAncestorVisible(teamId: string, ancestorRunId: string): Promise<void> {
    const found = await this.dataSource.getRepository(Run).existsBy({ id: ancestorRunId, teamId });
    if (!found) throw ApiError.notFound('ancestor run');
  }
}

/** The page query's raw sort value as a cursor value (DATETIME columns arrive as Date). */
function sortValue(sortBy: RunSortField, row: PageRow): Date | string | null {
  const value = row.sortValue;
  if (value === null || value === undefined) return null;
  if (sortBy === 'created_at' || sortBy === 'updated_at') {
    if (value instanceof Date) return value;
    throw new Error(`run list: expected a Date for ${sortBy}, got ${typeof value}`);
  }
  return String(value);
}
